//! out/ as another revision holds it, read from git objects without a checkout: the "before" of a pull request's
//! review (`gpuplan diff --base`).
//!
//! The base's *committed* out/ is the before, not the base's profiles compiled again: it is what Argo CD or Flux
//! applies from the base branch today, so the review shows what merging changes in the cluster, including a base
//! whose out/ was already stale. (Compiling the base's profiles with the head's binary would instead hide a change
//! of gpuplan's own version or of the catalog between the two.)

use std::path::Path;

use git2::{ErrorCode, ObjectType, Repository};

use super::error::GitopsError;
use super::paths::repo_relative;
use super::repo::tree_from_git;
use crate::layout::OutputTree;

/// out/ (`out_dir`, in the work tree of the repository holding `repo_dir`) at revision `rev` (anything
/// `git rev-parse` takes: a sha, `origin/main`, `HEAD^1`). A revision this clone does not hold is
/// [`GitopsError::UnknownRevision`], whose message gives the `git fetch` that brings it; a revision without out/ gives
/// an empty tree (the pull request that adds gpuplan).
pub fn out_at_revision(repo_dir: &Path, out_dir: &Path, rev: &str) -> Result<OutputTree, GitopsError> {
    let (git, rel) = open(repo_dir, out_dir)?;
    let tree = tree_at(&git, rev)?;
    Ok(tree_from_git(&git, Some(&tree), &rel)?)
}

/// The one file `path` (in the work tree of the repository holding `repo_dir`) at revision `rev`, as text: None when
/// the revision has no such file (or it is not a file). What `diff --base` reads of a file at the repository's top,
/// such as `gpuplan.kdl`, whose directory is the whole repository.
pub fn file_at_revision(repo_dir: &Path, path: &Path, rev: &str) -> Result<Option<String>, GitopsError> {
    let (git, rel) = open(repo_dir, path)?;
    let tree = tree_at(&git, rev)?;
    let entry = match tree.get_path(&rel) {
        Ok(entry) if entry.kind() == Some(ObjectType::Blob) => entry,
        Ok(_) => return Ok(None),
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(None),
        Err(e) => return Err(GitopsError::Git(e)),
    };
    super::repo::charge_blob(&git, entry.id(), path).map_err(GitopsError::Git)?;
    let blob = git.find_blob(entry.id()).map_err(GitopsError::Git)?;
    Ok(Some(String::from_utf8_lossy(blob.content()).into_owned()))
}

/// The repository holding `repo_dir`, and `path` relative to its work tree.
fn open(repo_dir: &Path, path: &Path) -> Result<(Repository, std::path::PathBuf), GitopsError> {
    let git = Repository::discover(repo_dir).map_err(|source| GitopsError::NotARepository { path: repo_dir.to_path_buf(), source })?;
    let workdir = git.workdir().ok_or_else(|| GitopsError::BareRepository(git.path().to_path_buf()))?.to_path_buf();
    let rel = repo_relative(&workdir, path)?;
    Ok((git, rel))
}

/// The tree of revision `rev`.
fn tree_at<'r>(git: &'r Repository, rev: &str) -> Result<git2::Tree<'r>, GitopsError> {
    let unknown = |source: git2::Error| GitopsError::UnknownRevision { rev: rev.to_owned(), shallow: git.is_shallow(), source };
    let object = git.revparse_single(rev).map_err(unknown)?;
    let commit = object.peel(ObjectType::Commit).map_err(unknown)?;
    commit.peel_to_tree().map_err(|source| match source.code() {
        ErrorCode::NotFound => unknown(source),
        _ => GitopsError::Git(source),
    })
}
