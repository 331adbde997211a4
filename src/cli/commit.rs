//! `gpuplan commit`: compile, then commit the changed files of out/ (and changed catalog snapshots) in one commit.

use std::path::PathBuf;
use std::process::ExitCode;

use gpuplan::emit::{self, gitops};

use super::inputs::Inputs;
use super::lock::writer_lock;
use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Output directory, as compile's.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Commit message (default: a summary of the semantic diff).
    #[arg(short, long)]
    message: Option<String>,
    /// Commit on this branch (created from HEAD if missing) without touching the work tree.
    #[arg(long)]
    branch: Option<String>,
    /// Overwrite files in out/ that were edited by hand.
    #[arg(long)]
    force: bool,
    /// Commit a change that removes NodePools (refused otherwise: deleting a NodePool deletes its nodes at once,
    /// without disruption budgets).
    #[arg(long)]
    allow_removal: bool,
    /// Commit the profiles (and gpuplan.kdl) out/ was compiled from in the same commit (refused otherwise when they
    /// have uncommitted changes: a commit of out/ without them would fail `compile --check`).
    #[arg(long)]
    include_inputs: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { inputs, out, message, branch, force, allow_removal, include_inputs } = args;
    let _lock = writer_lock(&out)?;
    let mut compiled = inputs.compile()?;
    let repo = std::env::current_dir().map_err(CliError::msg)?;
    // The snapshots this output was computed from, and tracked ones a refresh changed; nothing else.
    let regions: Vec<&str> = compiled.catalogs.keys().map(String::as_str).collect();
    let extra_paths = gitops::catalog_snapshots(&repo, &inputs.data.catalogs, &regions);
    let tree = compiled.take_output_tree();
    // Against the out/ of the commit this one goes on: what the GitOps tool syncs from.
    let base = gitops::base_out(&repo, &out, branch.as_deref()).map_err(CliError::msg)?;
    emit::transition::refuse(&out, &base, &tree, &compiled.profiles, &compiled.sources)?;
    // What out/ was compiled from, as the compile read it (relative to the working directory), made absolute: the
    // profiles and the repository config (its shared clusters and settings shape out/ as much as a profile does).
    let mut read: Vec<std::path::PathBuf> = compiled.profiles.iter().map(|p| repo.join(compiled.sources.path(p.file))).collect();
    read.extend(super::inputs::config_path().map(|config| repo.join(config)));
    let options = gitops::CommitOptions { message, branch, force, allow_removal, extra_paths, inputs: read, include_inputs };
    match gitops::commit(&repo, &out, &tree, &options).map_err(CliError::msg)? {
        gitops::CommitOutcome::NothingToCommit => super::inform(format!("nothing to commit: {} is up to date", out.display())),
        gitops::CommitOutcome::Committed { id, files, message, reference, .. } => {
            println!("{message}");
            super::inform(format!("committed {} on {reference} ({} files)", &id[..12.min(id.len())], files.len()));
        }
    }
    Ok(ExitCode::SUCCESS)
}
