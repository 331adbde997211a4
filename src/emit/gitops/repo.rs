//! The repository: opening it, where the commit goes (HEAD or a branch), and the commit it goes on.

use std::fs;
use std::path::{Path, PathBuf};

use git2::{Branch, ErrorCode, ObjectType, Oid, Repository, RepositoryState, Signature, Tree, TreeWalkMode, TreeWalkResult};

use super::error::GitopsError;
use crate::layout::OutputTree;

/// Where the commit goes.
pub(super) enum Target {
    /// HEAD: the checked-out branch, an unborn branch or a detached HEAD. The work tree is updated.
    Head,
    /// A branch that is not checked out here; the work tree is not touched.
    Branch { refname: String, exists: bool },
}

/// The repository holding out/, and its work tree.
pub(super) struct Repo {
    pub(super) git: Repository,
    pub(super) workdir: PathBuf,
}

impl Repo {
    /// The repository holding `repo_dir`, and its work tree; refused while a merge, rebase, … is in progress.
    pub(super) fn open(repo_dir: &Path) -> Result<Repo, GitopsError> {
        let repo = Repository::discover(repo_dir).map_err(|source| GitopsError::NotARepository { path: repo_dir.to_path_buf(), source })?;
        let workdir = repo.workdir().ok_or_else(|| GitopsError::BareRepository(repo.path().to_path_buf()))?.to_path_buf();
        if let Some(state) = state_name(repo.state()) {
            return Err(GitopsError::RepositoryBusy(state.to_owned()));
        }
        Ok(Repo { git: repo, workdir })
    }

    /// Author and committer: `GIT_AUTHOR_*` / `GIT_COMMITTER_*` when set, else the configured identity.
    pub(super) fn signatures(&self) -> Result<(Signature<'static>, Signature<'static>), GitopsError> {
        signature(&self.git)
    }
}

/// What the new commit goes on: where it goes, its parent (none on an unborn branch), the parent's tree, and out/
/// as that tree holds it.
pub(super) struct Base<'r> {
    pub(super) target: Target,
    pub(super) parent: Option<git2::Commit<'r>>,
    pub(super) tree: Option<Tree<'r>>,
    pub(super) old_out: OutputTree,
}

impl<'r> Base<'r> {
    pub(super) fn resolve(repo: &'r Repo, out_rel: &Path, branch: Option<&str>) -> Result<Base<'r>, GitopsError> {
        let target = resolve_target(&repo.git, &repo.workdir, branch)?;
        let parent = parent_commit(&repo.git, &target)?;
        let tree = parent.as_ref().map(|c| c.tree()).transpose()?;
        let old_out = tree_from_git(&repo.git, tree.as_ref(), out_rel)?;
        Ok(Base { target, parent, tree, old_out })
    }

    /// Whether the commit goes on HEAD, so that out/ in the work tree and the index are updated too.
    pub(super) fn on_head(&self) -> bool {
        matches!(self.target, Target::Head)
    }
}

fn resolve_target(
    repo: &Repository,
    workdir: &Path,
    branch: Option<&str>,
) -> Result<Target, GitopsError> {
    let Some(b) = branch else {
        return Ok(Target::Head);
    };
    let b = b.strip_prefix("refs/heads/").unwrap_or(b);
    if b.is_empty() || !Branch::name_is_valid(b)? {
        return Err(GitopsError::InvalidBranch(b.to_owned()));
    }
    let refname = format!("refs/heads/{b}");
    let head = repo.find_reference("HEAD")?;
    if head.symbolic_target().ok().flatten() == Some(refname.as_str()) {
        return Ok(Target::Head);
    }
    if let Some(worktree) = checked_out_elsewhere(repo, workdir, &refname) {
        return Err(GitopsError::BranchCheckedOutElsewhere {
            branch: b.to_owned(),
            worktree,
        });
    }
    let exists = match repo.find_reference(&refname) {
        Ok(_) => true,
        Err(e) if e.code() == ErrorCode::NotFound => false,
        Err(e) => return Err(e.into()),
    };
    Ok(Target::Branch { refname, exists })
}

/// The work tree (other than ours) that has `refname` checked out, if any. Best effort.
fn checked_out_elsewhere(repo: &Repository, workdir: &Path, refname: &str) -> Option<PathBuf> {
    let ours = fs::canonicalize(workdir).ok();
    let main = Repository::open(repo.commondir()).ok()?;
    let mut candidates = vec![main];
    if let Ok(names) = candidates[0].worktrees() {
        for name in names.iter().flatten().flatten() {
            if let Ok(wt) = candidates[0].find_worktree(name)
                && let Ok(r) = Repository::open_from_worktree(&wt)
            {
                candidates.push(r);
            }
        }
    }
    candidates.into_iter().find_map(|r| {
        let wd = r.workdir()?.to_path_buf();
        if fs::canonicalize(&wd).ok() == ours {
            return None;
        }
        let head = r.find_reference("HEAD").ok()?;
        (head.symbolic_target().ok().flatten() == Some(refname)).then_some(wd)
    })
}

/// The files under `prefix` in a git tree, as an OutputTree relative to `prefix`. Non-UTF-8 blobs are read
/// lossily (they are foreign files and will fail the header check anyway).
pub fn tree_from_git(
    repo: &Repository,
    tree: Option<&Tree<'_>>,
    prefix: &Path,
) -> Result<OutputTree, git2::Error> {
    let mut out = OutputTree::default();
    let Some(tree) = tree else { return Ok(out) };
    let entry = match tree.get_path(prefix) {
        Ok(e) => e,
        Err(e) if e.code() == ErrorCode::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    if entry.kind() != Some(ObjectType::Tree) {
        return Ok(out);
    }
    let sub = repo.find_tree(entry.id())?;
    let mut blobs = Vec::new();
    sub.walk(TreeWalkMode::PreOrder, |dir, e| {
        if e.kind() == Some(ObjectType::Blob) {
            blobs.push((
                format!("{dir}{}", String::from_utf8_lossy(e.name_bytes())),
                e.id(),
            ));
        }
        TreeWalkResult::Ok
    })?;
    for (path, id) in blobs {
        charge_blob(repo, id, &prefix.join(&path))?;
        let blob = repo.find_blob(id)?;
        out.files.insert(
            PathBuf::from(path),
            String::from_utf8_lossy(blob.content()).into_owned(),
        );
    }
    Ok(out)
}

/// Bytes this process has read from git objects so far (`tree_from_git`, `file_at_revision`): the
/// [`crate::limits::BASE_OUT_BYTES`] limit is on one run's reads together, whichever call makes them (`diff`
/// reads the base's out/, then each profile path, the catalogs and gpuplan.kdl at the base, each a call of its own).
static READ_FROM_GIT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Admits blob `id` (shown as `shown`) before its content is read: its size from the object's header (a 1 GiB file
/// in the base's out/, where a pull request's base is anyone's branch, is refused without being loaded) against the
/// one-file cap, and the run's total against the base limit.
pub(super) fn charge_blob(repo: &Repository, id: git2::Oid, shown: &Path) -> Result<(), git2::Error> {
    let (cap, total_cap) = (blob_limit(crate::limits::INPUT_BYTES)?, blob_limit(crate::limits::BASE_OUT_BYTES)?);
    let (size, _) = repo.odb()?.read_header(id)?;
    let size = size as u64;
    if size > cap {
        return Err(too_large(shown, size, cap, crate::limits::INPUT_BYTES));
    }
    let total = READ_FROM_GIT.fetch_add(size, std::sync::atomic::Ordering::Relaxed) + size;
    if total > total_cap {
        return Err(too_large(shown, total, total_cap, crate::limits::BASE_OUT_BYTES));
    }
    Ok(())
}

fn blob_limit(limit: crate::limits::Limit) -> Result<u64, git2::Error> {
    limit.value().map_err(|e| git2::Error::from_str(&e.to_string()))
}

fn too_large(path: &Path, size: u64, cap: u64, limit: crate::limits::Limit) -> git2::Error {
    let (size, cap) = (crate::input::human_bytes(size), crate::input::human_bytes(cap));
    git2::Error::from_str(&format!("{}: {size} in git, more than the {cap} of the {}: {}", path.display(), limit.counts, limit.how_to_raise()))
}

fn signature(repo: &Repository) -> Result<(Signature<'static>, Signature<'static>), GitopsError> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let author = match (env("GIT_AUTHOR_NAME"), env("GIT_AUTHOR_EMAIL")) {
        (Some(n), Some(e)) => Signature::now(&n, &e)?,
        _ => repo.signature().map_err(GitopsError::NoIdentity)?,
    };
    let committer = match (env("GIT_COMMITTER_NAME"), env("GIT_COMMITTER_EMAIL")) {
        (Some(n), Some(e)) => Signature::now(&n, &e)?,
        _ => repo.signature().unwrap_or_else(|_| author.clone()),
    };
    Ok((author, committer))
}

fn state_name(state: RepositoryState) -> Option<&'static str> {
    Some(match state {
        RepositoryState::Clean => return None,
        RepositoryState::Merge => "merge",
        RepositoryState::Revert | RepositoryState::RevertSequence => "revert",
        RepositoryState::CherryPick | RepositoryState::CherryPickSequence => "cherry-pick",
        RepositoryState::Bisect => "bisect",
        RepositoryState::Rebase
        | RepositoryState::RebaseInteractive
        | RepositoryState::RebaseMerge => "rebase",
        RepositoryState::ApplyMailbox | RepositoryState::ApplyMailboxOrRebase => "git am",
    })
}

/// The commit the new one goes on: HEAD's (none on an unborn branch), or the target branch's tip when it exists.
fn parent_commit<'r>(repo: &'r Repository, target: &Target) -> Result<Option<git2::Commit<'r>>, GitopsError> {
    let head_commit = match repo.head() {
        Ok(h) => Some(h.peel_to_commit()?),
        Err(e) if e.code() == ErrorCode::UnbornBranch || e.code() == ErrorCode::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    Ok(match target {
        Target::Branch { refname, exists: true } => Some(repo.find_reference(refname)?.peel_to_commit()?),
        Target::Head | Target::Branch { exists: false, .. } => head_commit,
    })
}

/// (the ref the report names, the ref the commit updates).
pub(super) fn reference_names(repo: &Repository, target: &Target) -> Result<(String, String), GitopsError> {
    Ok(match target {
        Target::Head => {
            let head = repo.find_reference("HEAD")?;
            let named = head.symbolic_target().ok().flatten().map_or_else(|| "HEAD".to_owned(), str::to_owned);
            (named, "HEAD".to_owned())
        }
        Target::Branch { refname, .. } => (refname.clone(), refname.clone()),
    })
}

/// Moves `update_ref` (or the branch HEAD names) back from `ours` to `parent`, or deletes it when the commit was
/// the first; only if it still points at `ours`.
pub(super) fn undo_ref(repo: &Repository, update_ref: &str, parent: Option<Oid>, ours: Oid) -> Result<(), GitopsError> {
    let head = repo.find_reference(update_ref)?;
    let name = match head.symbolic_target().ok().flatten() {
        Some(branch) => branch.to_owned(),
        None => update_ref.to_owned(),
    };
    match parent {
        Some(parent) => {
            repo.reference_matching(&name, parent, true, ours, "gpuplan commit: rolled back (index not updated)")?;
        }
        None => repo.find_reference(&name)?.delete()?,
    }
    Ok(())
}
