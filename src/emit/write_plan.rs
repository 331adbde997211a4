//! Part of the emit stage: what `compile` may write to out/, decided before anything is written. out/ is
//! generated, but a file there without gpuplan's header was put there by someone, and writing the new tree would
//! delete it: such a plan is refused unless forced, so a [`WritePlan`] exists only once that check has passed.

use std::io;
use std::path::{Path, PathBuf};

use crate::layout::{HeaderStatus, OutputTree};

use super::{changes, hand_edits, write_tree};

/// Why out/ is not written.
#[derive(Debug, thiserror::Error)]
pub enum EmitError {
    /// Files of out/ (joined to its path) that gpuplan did not generate and the new tree does not hold.
    #[error(
        "{} holds files gpuplan did not generate, which compile would delete:\n  {}\nmove them out of {}, or pass --force",
        out.display(),
        paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join("\n  "),
        out.display()
    )]
    ForeignFiles { out: PathBuf, paths: Vec<PathBuf> },
}

/// Writing `tree` over `out`, checked: the files it deletes are all gpuplan's (or `force` says to delete them).
pub struct WritePlan<'a> {
    out: &'a Path,
    tree: &'a OutputTree,
    /// How many files of out/ the write adds, changes or removes.
    pub changed: usize,
    /// The files of out/ (joined to its path) the write deletes: no profile produces them any more (a renamed pool,
    /// a removed profile), so `compile` names each.
    pub removed: Vec<PathBuf>,
}

impl<'a> WritePlan<'a> {
    /// `current` is what out/ holds now ([`super::read_tree`]).
    pub fn new(out: &'a Path, current: &OutputTree, tree: &'a OutputTree, force: bool) -> Result<Self, EmitError> {
        let foreign: Vec<PathBuf> = hand_edits(current)
            .into_iter()
            .filter(|e| e.status == HeaderStatus::NotGenerated && !tree.files.contains_key(&e.path))
            .map(|e| out.join(&e.path))
            .collect();
        if !foreign.is_empty() && !force {
            return Err(EmitError::ForeignFiles { out: out.to_path_buf(), paths: foreign });
        }
        let changes = changes(current, tree);
        let removed = changes.iter().filter(|c| c.kind == super::ChangeKind::Removed).map(|c| out.join(&c.path)).collect();
        Ok(WritePlan { out, tree, changed: changes.len(), removed })
    }

    /// Writes the tree ([`write_tree`]: atomically, one swap of the directory).
    pub fn write(self) -> io::Result<()> {
        write_tree(self.out, self.tree)
    }
}
