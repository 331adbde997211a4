//! The new commit's tree, written as unreferenced git objects before anything else changes.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use git2::{Index, Oid, Repository, Tree};

use super::error::GitopsError;
use super::index::{IndexLock, Ours, index_entry};
use super::paths::{CommitPaths, slash};
use crate::emit::swap::Swap;
use crate::emit::write_tree_swapped;
use crate::layout::OutputTree;

/// The new commit's tree, written as unreferenced git objects, what it changes, and the index lock (when the
/// commit goes on HEAD). Nothing outside `.git` has changed while one exists, and only a `Staged` commit writes
/// out/ ([`Staged::write_out`]): every check has passed before.
pub(super) struct Staged<'a, 'r> {
    paths: &'a CommitPaths,
    /// The generated out/.
    out: &'a OutputTree,
    /// The commit's tree.
    pub(super) tree: Tree<'r>,
    /// The tree is the parent's: nothing to commit.
    pub(super) unchanged: bool,
    /// Repo-relative paths the commit changes (both sides of renames), sorted.
    pub(super) files: Vec<PathBuf>,
    index_lock: Option<IndexLock>,
}

/// Writes the commit's tree (the parent's, out/ replaced by `out`, the extra paths as the work tree has them) as
/// git objects and compares it with the parent's.
pub(super) fn stage<'a, 'r>(
    repo: &'r Repository,
    base_tree: Option<&Tree<'r>>,
    paths: &'a CommitPaths,
    out: &'a OutputTree,
    index_lock: Option<IndexLock>,
) -> Result<Staged<'a, 'r>, GitopsError> {
    let id = commit_tree(repo, &paths.workdir, base_tree, &paths.out_prefix, out, &paths.extras)?;
    let tree = repo.find_tree(id)?;
    let unchanged = match base_tree {
        Some(t) => t.id() == id,
        None => tree.is_empty(),
    };
    let files = changed_paths(repo, base_tree, &tree)?;
    Ok(Staged { paths, out, tree, unchanged, files, index_lock })
}

impl Staged<'_, '_> {
    /// out/ swapped in with the previous tree kept, so that a failure from here on can put it back; nothing
    /// when the commit goes to a branch that is not checked out (`on_head` false).
    pub(super) fn write_out(&self, on_head: bool) -> Result<Option<Swap>, GitopsError> {
        if !on_head {
            return Ok(None);
        }
        let swap = write_tree_swapped(&self.paths.abs_out, self.out).map_err(|source| GitopsError::Write {
            out_dir: self.paths.out_dir.clone(),
            source,
        })?;
        Ok(Some(swap))
    }

    /// The index with our paths brought in line with the commit, written into the index lock (not installed);
    /// `None` when no lock is held.
    pub(super) fn stage_index(&mut self) -> Result<Option<IndexLock>, GitopsError> {
        let ours = Ours { paths: self.paths, tree: self.out, new_tree: &self.tree };
        self.index_lock.take().map(|lock| lock.stage(&ours)).transpose()
    }

    /// The extra paths the commit changes.
    pub(super) fn extra_changed(&self) -> Vec<PathBuf> {
        self.files.iter().filter(|p| self.paths.extras.contains(&slash(p))).cloned().collect()
    }
}

/// The commit's tree: the parent's, out/ replaced by `tree`, the extra paths as they are in the work tree. Written
/// as unreferenced git objects only.
fn commit_tree(repo: &Repository, workdir: &Path, base_tree: Option<&git2::Tree<'_>>, out_prefix: &str, tree: &OutputTree, extras: &BTreeSet<String>) -> Result<Oid, GitopsError> {
    let mut idx = Index::new()?;
    if let Some(t) = base_tree {
        idx.read_tree(t)?;
    }
    let stale: Vec<String> = idx
        .iter()
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| p == out_prefix || p.starts_with(&format!("{out_prefix}/")))
        .collect();
    for p in &stale {
        idx.remove_path(Path::new(p))?;
    }
    for (rel, text) in &tree.files {
        let path = format!("{out_prefix}/{}", slash(rel));
        let id = repo.blob(text.as_bytes())?;
        idx.add(&index_entry(&path, id, 0o100644, text.len()))?;
    }
    for p in extras {
        add_work_tree_path(&mut idx, repo, workdir, p)?;
    }
    Ok(idx.write_tree_to(repo)?)
}

/// One extra path as the work tree has it: a file (its executable bit kept), a symlink, or gone (removed).
fn add_work_tree_path(idx: &mut Index, repo: &Repository, workdir: &Path, p: &str) -> Result<(), GitopsError> {
    let full = workdir.join(p);
    let read_error = |source| GitopsError::Read { path: full.clone(), source };
    match fs::symlink_metadata(&full) {
        Ok(m) if m.is_dir() => Err(GitopsError::InvalidExtraPath { path: p.into(), reason: "is a directory; list the files in it".into() }),
        Ok(m) if m.file_type().is_symlink() => {
            let bytes = fs::read_link(&full).map_err(read_error)?.to_string_lossy().into_owned().into_bytes();
            Ok(idx.add(&index_entry(p, repo.blob(&bytes)?, 0o120000, bytes.len()))?)
        }
        Ok(m) => {
            let bytes = crate::input::read(&full).map_err(read_error)?;
            #[cfg(unix)]
            let exec = std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o111 != 0;
            #[cfg(not(unix))]
            let exec = {
                let _ = &m;
                false
            };
            let mode = if exec { 0o100755 } else { 0o100644 };
            Ok(idx.add(&index_entry(p, repo.blob(&bytes)?, mode, bytes.len()))?)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(idx.remove_path(Path::new(p))?),
        Err(source) => Err(read_error(source)),
    }
}

/// The paths the commit changes (both sides of renames).
fn changed_paths(repo: &Repository, base_tree: Option<&git2::Tree<'_>>, new_tree: &git2::Tree<'_>) -> Result<Vec<PathBuf>, GitopsError> {
    let mut files = BTreeSet::new();
    let diff = repo.diff_tree_to_tree(base_tree, Some(new_tree), None)?;
    for delta in diff.deltas() {
        for f in [delta.old_file(), delta.new_file()] {
            if let Some(p) = f.path() {
                files.insert(p.to_path_buf());
            }
        }
    }
    Ok(files.into_iter().collect())
}
