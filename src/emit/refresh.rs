//! Part of the emit stage: what a catalog refresh changes in out/. `catalog refresh` compiles the profiles again
//! against the snapshots it wrote and shows which manifests the new data moves, before anyone runs `compile` or
//! `commit` to apply them.

use std::io;
use std::path::{Path, PathBuf};

use crate::compile::CompileOptions;
use crate::layout::OutputTree;

use super::diff::{DiffFormat, render_diff};
use super::read_tree;

/// The compile that follows a refresh: the profiles against the refreshed snapshots in `catalogs_dir`, with the
/// built-in templates. None when a profile path is missing (a refresh run where no profiles are): nothing to
/// compare then.
pub fn recompile_options(profiles: &[PathBuf], catalogs_dir: &Path) -> Option<CompileOptions> {
    profiles.iter().all(|p| p.exists()).then(|| CompileOptions { profiles: profiles.to_vec(), catalogs_dir: catalogs_dir.to_path_buf(), templates_dir: None })
}

/// What the recompiled `tree` changes in `out_dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutImpact {
    /// out/ already holds exactly the new tree.
    Unchanged,
    /// The changed objects, as the markdown summary of [`render_diff`].
    Changes { markdown: String },
}

/// Compares `tree` with what `out_dir` holds now.
pub fn impact(out_dir: &Path, tree: &OutputTree) -> io::Result<OutImpact> {
    let current = read_tree(out_dir)?;
    Ok(if current == *tree { OutImpact::Unchanged } else { OutImpact::Changes { markdown: render_diff(&current, tree, DiffFormat::Markdown) } })
}
