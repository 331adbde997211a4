//! `gpuplan compile`: profiles → out/, or with `--check` whether out/ is current.

use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gpuplan::emit::{self, WritePlan};
use gpuplan::layout::OutputTree;

use super::inputs::Inputs;
use super::lock::writer_lock;
use super::CliError;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    inputs: Inputs,
    /// Output directory.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Change nothing; exit 1 and print a unified diff when out/ differs from what compile would write.
    #[arg(long)]
    check: bool,
    /// Replace files in out/ that have no gpuplan header (compile refuses to delete them otherwise).
    #[arg(long)]
    force: bool,
}

pub fn run(args: Args) -> Result<ExitCode, CliError> {
    let Args { inputs, out, check, force } = args;
    // Held until the process ends; `--check` only reads.
    let _lock = if check { None } else { Some(writer_lock(&out)?) };
    // Never dropped: the process ends with this command and the OS reclaims the compilation and both trees at
    // once, where dropping them would free hundreds of thousands of values one by one.
    let mut compiled = ManuallyDrop::new(inputs.compile()?);
    check_demand(&compiled)?;
    let tree = ManuallyDrop::new(compiled.take_output_tree());
    // Compared file by file first: a current out/ (the common case in CI, for `compile` as for `--check`) is
    // never read into memory whole, and there is nothing to write.
    if emit::is_current(&out, &tree).map_err(CliError::io("read", &out))? {
        say_current(&out, &tree, check);
        return Ok(ExitCode::SUCCESS);
    }
    let current = ManuallyDrop::new(emit::read_tree(&out).map_err(CliError::io("read", &out))?);
    // Before anything is printed or written: an update the API server refuses is an error, not a diff.
    emit::transition::refuse(&out, &current, &tree, &compiled.profiles, &compiled.sources)?;
    if check {
        return Ok(stale(&out, &current, &tree));
    }
    let mut plan = WritePlan::new(&out, &current, &tree, force)?;
    let changed = plan.changed;
    let removed = std::mem::take(&mut plan.removed);
    plan.write().map_err(CliError::io("write", &out))?;
    for path in removed {
        super::inform(format!("removed {} (no profile produces it any more)", path.display()));
    }
    super::inform(format!("wrote {} ({} files, {changed} changed)", out.display(), tree.files.len()));
    Ok(ExitCode::SUCCESS)
}

/// The repository's demand file, when there is one, against what was compiled: a renamed workload, queue or pool
/// fails the compile (and CI's `compile --check`) here rather than the next forecast.
fn check_demand(compiled: &gpuplan::compile::Compilation) -> Result<(), CliError> {
    use gpuplan::forecast::demand;
    let root = super::inputs::repository_root();
    // The demand file speaks of this repository's profiles: profiles compiled from elsewhere (a path outside the
    // repository) are not what it names.
    let inside = |p: &Path| std::path::absolute(p).ok().zip(std::path::absolute(&root).ok()).is_some_and(|(p, r)| p.starts_with(r));
    if !compiled.profiles.iter().all(|p| inside(compiled.sources.path(p.file))) {
        return Ok(());
    }
    let found = demand::load(&root).map_err(CliError::Demand)?;
    // The names, and the work the file's own forecast asks for against the limits (what the diff step would replay).
    let problems = found.map(|d| gpuplan::forecast::run::check_demand(compiled, &d, &Default::default())).unwrap_or_default();
    if problems.is_empty() { Ok(()) } else { Err(CliError::Demand(problems)) }
}

/// out/ already holds the tree: nothing to write, nothing stale.
fn say_current(out: &Path, tree: &OutputTree, check: bool) {
    if check {
        super::inform(format!("{} is up to date ({} files)", out.display(), tree.files.len()));
    } else {
        super::inform(format!("wrote {} ({} files, 0 changed)", out.display(), tree.files.len()));
    }
}

/// `--check` on a stale out/: the diff on stdout, exit 1.
fn stale(out: &Path, current: &OutputTree, tree: &OutputTree) -> ExitCode {
    print!("{}", emit::diff::render_unified(current, tree, &out.display().to_string()));
    eprintln!("{} is stale: run `gpuplan compile` and commit the result", out.display());
    ExitCode::from(1)
}
