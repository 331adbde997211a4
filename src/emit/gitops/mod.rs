//! The GitOps stage: write out/ and commit exactly the generated files (plus any extra paths), nothing else.
//!
//! # What `commit` touches
//! The commit's tree is built in memory: the parent commit's tree, with the out/ subtree replaced by the
//! [`OutputTree`] and each extra path set to its work-tree content (or deleted when missing). The repository
//! index is not used to build it, so whatever the user has staged, modified or left untracked elsewhere stays
//! exactly as it was — staged stays staged, uncommitted stays uncommitted. Afterwards only the index entries of
//! our own paths are refreshed so `git status` shows them clean.
//!
//! # Branch semantics (`CommitOptions::branch`)
//! * `None`: commit on whatever HEAD is — the checked-out branch, an unborn branch (first commit of a fresh
//!   repository), or a detached HEAD (HEAD moves to the new commit; no branch is created or moved). out/ in the
//!   work tree is rewritten to match the tree.
//! * `Some(B)` where B is the checked-out branch (or the unborn branch HEAD points at): same as `None`.
//! * `Some(B)` otherwise: the commit goes to `refs/heads/B` **without touching the work tree, the index or
//!   HEAD**. Its parent is B's tip; a missing B is created from HEAD's commit (or as a root commit when HEAD is
//!   unborn). Hand edits are checked in B's committed out/ (nothing in the work tree is replaced). Typical CI use:
//!   `gpuplan commit --branch gpuplan/update && git push origin gpuplan/update`. Refused when B is checked out in
//!   another worktree (moving it would leave that worktree's files and index stale).
//!
//! # Refusals (nothing written, no commit)
//! A file in out/ whose gpuplan header digest does not match its body, or that has no gpuplan header, unless
//! `force`; a profile out/ was compiled from with changes HEAD does not hold (modified, staged, untracked: the
//! commit would fail `compile --check`), unless `include_inputs` commits it with out/; a repository in the middle
//! of a merge/rebase/…; no git identity; an out/ outside the repository or equal to its root.

mod error;
mod index;
mod message;
mod paths;
mod repo;
mod revision;
mod stage;

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use git2::{Repository, Signature};

use index::IndexLock;
use paths::{CommitPaths, repo_relative};
use repo::{Base, Repo, reference_names, undo_ref};
use stage::{Staged, stage};

use crate::emit::diff::removed_node_pools;
use crate::emit::swap::Swap;
use crate::emit::{hand_edits, read_tree};
use crate::layout::OutputTree;

pub use error::GitopsError;
pub use message::commit_message;
pub use repo::tree_from_git;
pub use revision::{file_at_revision, out_at_revision};

/// Options of [`commit`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommitOptions {
    /// Commit message; `None` = generated from the semantic diff.
    pub message: Option<String>,
    /// Branch to commit on (see the module docs); `None` = HEAD.
    pub branch: Option<String>,
    /// Overwrite hand-edited or foreign files in out/.
    pub force: bool,
    /// Commit even though the change removes NodePools (see [`crate::emit::diff::REMOVAL_WARNING`]).
    pub allow_removal: bool,
    /// More files to commit with out/, repo-relative (e.g. a refreshed catalog snapshot). Their work-tree content
    /// is committed; a missing file is committed as a deletion.
    pub extra_paths: Vec<PathBuf>,
    /// The files out/ was compiled from (the profiles; absolute or repo-relative). A commit whose out/ comes from a
    /// profile the commit does not hold would fail `compile --check` at that commit: refused when any of them has
    /// uncommitted changes (modified, staged but not committed, or untracked), unless `include_inputs`.
    pub inputs: Vec<PathBuf>,
    /// Commit `inputs` with out/ (as extra paths) instead of refusing.
    pub include_inputs: bool,
}

/// What [`commit`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommitOutcome {
    /// The target already holds exactly this out/ (and extra paths). The work tree's out/ was still brought in
    /// line with the tree (when committing on HEAD).
    NothingToCommit,
    Committed {
        /// Full hex id of the new commit.
        id: String,
        /// Repo-relative paths the commit changes (added, modified or deleted), sorted.
        files: Vec<PathBuf>,
        message: String,
        /// The reference moved: `refs/heads/<branch>`, or `HEAD` when HEAD is detached.
        reference: String,
        /// Whether out/ in the work tree (and the index entries of the committed paths) were updated; false when
        /// committing to a branch that is not checked out.
        worktree_updated: bool,
    },
}

/// Writes `tree` to `out_dir` (inside the repository at `repo_dir`) and commits exactly the files under out/
/// that changed (added, modified, deleted) plus `extra_paths`, in one commit whose generated message summarises
/// the semantic diff (subject line + per-object bullet lines) unless a message is given.
///
/// `out_dir` is absolute or relative to the current directory. All or nothing: every check first (hand edits,
/// removals, identity, paths, branch, and `index.lock`, which is then held), then the git objects (unreferenced
/// until the ref moves), then out/ is swapped in with the previous tree kept, then the new index is written into
/// `index.lock`, then the ref moves (only if it still points at the parent), then the index is installed (one
/// rename). A failure at any step puts the previous out/ back, drops the lock and leaves the ref (or moves it
/// back), so an error always means HEAD, the index and out/ are as they were.
///
/// "Changed" is relative to the parent commit, not to the work tree: running `compile` first and `commit` second
/// commits the same files. See the module docs for what is and is not touched, and for `--branch`.
pub fn commit(
    repo_dir: &Path,
    out_dir: &Path,
    tree: &OutputTree,
    opts: &CommitOptions,
) -> Result<CommitOutcome, GitopsError> {
    let repo = Repo::open(repo_dir)?;
    let extra: Vec<PathBuf> = if opts.include_inputs { opts.extra_paths.iter().chain(&opts.inputs).cloned().collect() } else { opts.extra_paths.clone() };
    let paths = CommitPaths::resolve(&repo.workdir, out_dir, tree, &extra)?;
    if !opts.include_inputs {
        refuse_uncommitted_inputs(&repo, &paths, &opts.inputs)?;
    }
    let base = Base::resolve(&repo, &paths.out_rel, opts.branch.as_deref())?;
    refuse_hand_edits(&base, &paths, opts.force)?;
    refuse_removals(&base, tree, opts.allow_removal)?;
    let signatures = repo.signatures()?;
    // The last check, and the first thing held: nothing is written while git (or anyone) holds the index.
    let index_lock = base.on_head().then(|| IndexLock::acquire(&repo.git)).transpose()?;

    let mut staged = stage(&repo.git, base.tree.as_ref(), &paths, tree, index_lock)?;
    let swap = staged.write_out(base.on_head())?;
    if staged.unchanged {
        let index = staged.stage_index();
        return finish(swap, index.and_then(|s| s.map(IndexLock::install).transpose()).map(|_| CommitOutcome::NothingToCommit));
    }
    let message = match &opts.message {
        Some(m) => m.clone(),
        None => commit_message(&base.old_out, tree, &staged.extra_changed()),
    };
    record(&repo, &base, staged, swap, message, &signatures)
}

/// The commit itself: the new index into the index lock, the ref moved to a new commit of the staged tree, the
/// index installed. A failure puts the previous out/ back (and the ref, when the index cannot be installed).
fn record(
    repo: &Repo,
    base: &Base<'_>,
    mut staged: Staged<'_, '_>,
    swap: Option<Swap>,
    message: String,
    (author, committer): &(Signature<'static>, Signature<'static>),
) -> Result<CommitOutcome, GitopsError> {
    let (reference, update_ref) = reference_names(&repo.git, &base.target)?;
    // The new index goes into the index lock before the ref moves, and is installed (one rename) right after.
    let index = match staged.stage_index() {
        Ok(index) => index,
        Err(e) => return finish(swap, Err(e)),
    };
    let parents: Vec<&git2::Commit<'_>> = base.parent.iter().collect();
    // libgit2 moves `update_ref` only if it still points at the first parent ("current tip is not the first
    // parent" otherwise, git_commit_create in libgit2's commit.c): a ref moved by someone else since we read it
    // fails here, before anything else changed.
    let id = match repo.git.commit(Some(&update_ref), author, committer, &message, &staged.tree, &parents) {
        Ok(id) => id,
        Err(e) => return finish(swap, Err(e.into())),
    };
    if let Some(index) = index
        && let Err(e) = index.install()
    {
        // Undo the ref move so that the error and the repository agree.
        let undone = undo_ref(&repo.git, &update_ref, base.parent.as_ref().map(|c| c.id()), id);
        return finish(swap, Err(undone.err().unwrap_or(e)));
    }
    let worktree_updated = base.on_head();
    finish(swap, Ok(CommitOutcome::Committed { id: id.to_string(), files: staged.files, message, reference, worktree_updated }))
}

/// out/ as the commit `commit` would go on holds it (HEAD's, or the target branch's tip): what the GitOps tool
/// applied, for the checks that compare the new objects with the ones they update (`emit::transition`).
pub fn base_out(repo_dir: &Path, out_dir: &Path, branch: Option<&str>) -> Result<OutputTree, GitopsError> {
    let repo = Repo::open(repo_dir)?;
    let out_rel = repo_relative(&repo.workdir, out_dir)?;
    Ok(Base::resolve(&repo, &out_rel, branch)?.old_out)
}

/// Hand edits in out/ are refused (unless `--force`) before anything is written: in the work tree when committing
/// on HEAD, in the target branch's committed out/ otherwise.
fn refuse_hand_edits(base: &Base<'_>, paths: &CommitPaths, force: bool) -> Result<(), GitopsError> {
    if force {
        return Ok(());
    }
    let current = if base.on_head() {
        read_tree(&paths.abs_out).map_err(|source| GitopsError::Read { path: paths.abs_out.clone(), source })?
    } else {
        base.old_out.clone()
    };
    let edits = hand_edits(&current);
    if !edits.is_empty() {
        return Err(GitopsError::HandEdited { out_dir: paths.out_dir.clone(), files: edits });
    }
    Ok(())
}

/// Inputs (profiles) with changes HEAD does not hold are refused before anything is written: each named, with what
/// git says of it.
fn refuse_uncommitted_inputs(repo: &Repo, paths: &CommitPaths, inputs: &[PathBuf]) -> Result<(), GitopsError> {
    let mut uncommitted = Vec::new();
    for input in paths::repository_paths(&repo.workdir, &paths.out_prefix, inputs)? {
        let status = repo.git.status_file(Path::new(&input))?;
        let state = if status.intersects(git2::Status::WT_NEW | git2::Status::IGNORED) {
            "untracked"
        } else if status.intersects(git2::Status::WT_MODIFIED | git2::Status::WT_TYPECHANGE | git2::Status::WT_RENAMED) {
            "modified"
        } else if !status.is_empty() {
            "staged, not committed"
        } else {
            continue;
        };
        uncommitted.push((PathBuf::from(input), state));
    }
    if uncommitted.is_empty() { Ok(()) } else { Err(GitopsError::UncommittedInputs(uncommitted)) }
}

/// Removed NodePools are refused (unless allowed) before anything is written.
fn refuse_removals(base: &Base<'_>, tree: &OutputTree, allow_removal: bool) -> Result<(), GitopsError> {
    if !allow_removal {
        let removed = removed_node_pools(&base.old_out, tree);
        if !removed.is_empty() {
            return Err(GitopsError::NodePoolRemoval(removed));
        }
    }
    Ok(())
}

/// Keeps the new out/ when `result` is a success, puts the previous one back otherwise.
fn finish(swap: Option<Swap>, result: Result<CommitOutcome, GitopsError>) -> Result<CommitOutcome, GitopsError> {
    match (swap, &result) {
        (Some(swap), Ok(_)) => swap.finish(),
        (Some(swap), Err(_)) => {
            if let Err(source) = swap.rollback() {
                return Err(GitopsError::Rollback { error: Box::new(result.expect_err("an error")), source });
            }
        }
        (None, _) => {}
    }
    result
}

/// The catalog snapshots `commit` commits with out/: every `*.json` in `catalogs_dir` that the index tracks (a
/// refreshed snapshot's changes), plus the snapshots this compile loaded (`<region>.json` of `loaded_regions`),
/// tracked or not, since out/ was computed from them. Anything else there, such as an untracked
/// `catalogs/.env.json`, is never staged. Absolute paths, sorted; empty outside a repository.
pub fn catalog_snapshots(repo_dir: &Path, catalogs_dir: &Path, loaded_regions: &[&str]) -> Vec<PathBuf> {
    let Ok(repo) = Repository::discover(repo_dir) else { return Vec::new() };
    let (Some(workdir), Ok(index)) = (repo.workdir().and_then(|w| fs::canonicalize(w).ok()), repo.index()) else {
        return Vec::new();
    };
    let Ok(dir) = fs::canonicalize(catalogs_dir) else { return Vec::new() };
    let Ok(entries) = fs::read_dir(&dir) else { return Vec::new() };
    let tracked = |path: &Path| path.strip_prefix(&workdir).is_ok_and(|rel| index.get_path(rel, 0).is_some());
    let loaded: BTreeSet<String> = loaded_regions.iter().map(|r| format!("{r}.json")).collect();
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| tracked(p) || p.file_name().and_then(|n| n.to_str()).is_some_and(|n| loaded.contains(n)))
        .collect();
    found.sort();
    found
}
