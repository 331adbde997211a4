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
//! `force`; a repository in the middle of a merge/rebase/…; no git identity; an out/ outside the repository or
//! equal to its root.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use git2::{
    Branch, ErrorCode, Index, IndexEntry, IndexTime, ObjectType, Oid, Repository, RepositoryState,
    Signature, Tree, TreeWalkMode, TreeWalkResult,
};

use crate::emit::diff::{CostMeasure, REMOVAL_WARNING, RemovedNodePool, cluster_costs, removed_node_pools, semantic_changes};
use crate::emit::swap::Swap;
use crate::emit::{HandEdit, hand_edits, read_tree, write_tree_swapped};
use crate::layout::{HeaderStatus, OutputTree};

fn removal_message(removed: &[RemovedNodePool]) -> String {
    let list: Vec<String> = removed.iter().map(|r| format!("  {r}")).collect();
    format!("this change removes {} NodePool(s):\n{}\n{REMOVAL_WARNING}; nothing was written or committed: pass --allow-removal to commit it", removed.len(), list.join("\n"))
}

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

/// Errors of [`commit`]; each message says what to do.
#[derive(Debug, thiserror::Error)]
pub enum GitopsError {
    #[error("{} is not inside a git repository ({source}); run `git init` there or run gpuplan inside a clone", path.display())]
    NotARepository {
        path: PathBuf,
        #[source]
        source: git2::Error,
    },
    #[error("{} is a bare repository; gpuplan commit needs a work tree, run it in a clone", .0.display())]
    BareRepository(PathBuf),
    #[error(
        "the output directory {} is not inside the repository work tree {} (or is its root); pass an --out inside the repository",
        out_dir.display(), workdir.display()
    )]
    OutsideRepository { out_dir: PathBuf, workdir: PathBuf },
    #[error("extra path {}: {reason}", path.display())]
    InvalidExtraPath { path: PathBuf, reason: String },
    #[error("{}", hand_edited_message(out_dir, files))]
    HandEdited {
        out_dir: PathBuf,
        files: Vec<HandEdit>,
    },
    #[error("{}", removal_message(.0))]
    NodePoolRemoval(Vec<RemovedNodePool>),
    #[error(
        "`{0}` is not a valid branch name; use a name `git branch` accepts, e.g. gpuplan/update"
    )]
    InvalidBranch(String),
    #[error(
        "branch {branch} is checked out in the worktree {}; commit there, or pick another --branch",
        worktree.display()
    )]
    BranchCheckedOutElsewhere { branch: String, worktree: PathBuf },
    #[error(
        "the repository is in the middle of a {0}; finish or abort it (git status says how), then run gpuplan commit again"
    )]
    RepositoryBusy(String),
    #[error(
        "no git identity ({0}); set one with `git config user.name \"Your Name\"` and `git config user.email you@example.com`, or GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL"
    )]
    NoIdentity(#[source] git2::Error),
    #[error("reading {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("writing {} failed and it was left unchanged: {source}", out_dir.display())]
    Write {
        out_dir: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error(
        "{} exists: another git process is running in this repository, or one crashed. Nothing was written or \
         committed. Wait for it to finish; if none is running, remove the file and run gpuplan commit again",
        .0.display()
    )]
    IndexLocked(PathBuf),
    #[error("{error}; putting the previous out/ back failed too ({source}): check out/ with `git status`")]
    Rollback {
        error: Box<GitopsError>,
        #[source]
        source: io::Error,
    },
    #[error("git: {0}")]
    Git(#[from] git2::Error),
}

fn hand_edited_message(out_dir: &Path, files: &[HandEdit]) -> String {
    let mut s = format!(
        "refusing to overwrite {} file(s) in {} that were edited by hand or not generated by gpuplan:\n",
        files.len(),
        out_dir.display()
    );
    for f in files {
        let why = match f.status {
            HeaderStatus::HandEdited => "edited by hand (gpuplan-digest does not match)",
            HeaderStatus::NotGenerated => "no gpuplan header",
            HeaderStatus::Intact => "intact",
        };
        s.push_str(&format!("  {}: {why}\n", out_dir.join(&f.path).display()));
    }
    s.push_str(
        "Move the change into the profile (or the templates) and re-run, move foreign files out of the output \
         directory, or pass --force to overwrite them.",
    );
    s
}

/// Where the commit goes.
enum Target {
    /// HEAD: the checked-out branch, an unborn branch or a detached HEAD. The work tree is updated.
    Head,
    /// A branch that is not checked out here; the work tree is not touched.
    Branch { refname: String, exists: bool },
}

fn slash(p: &Path) -> String {
    p.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

fn is_plain_relative(p: &Path) -> bool {
    p.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        && p.components().any(|c| matches!(c, Component::Normal(_)))
}

/// `out_dir` relative to the work tree, resolving symlinks of the existing part.
fn repo_relative(workdir: &Path, out_dir: &Path) -> Result<PathBuf, GitopsError> {
    let outside = || GitopsError::OutsideRepository {
        out_dir: out_dir.to_path_buf(),
        workdir: workdir.to_path_buf(),
    };
    let wd = fs::canonicalize(workdir).map_err(|source| GitopsError::Read {
        path: workdir.into(),
        source,
    })?;
    let abs = if out_dir.is_absolute() {
        out_dir.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|source| GitopsError::Read {
                path: ".".into(),
                source,
            })?
            .join(out_dir)
    };
    // Canonicalize the longest existing ancestor, then re-append the rest.
    let mut existing = abs.clone();
    let mut rest = Vec::new();
    let canon = loop {
        match fs::canonicalize(&existing) {
            Ok(c) => break c,
            Err(_) => {
                let Some(name) = existing.file_name() else {
                    return Err(outside());
                };
                rest.push(name.to_os_string());
                if !existing.pop() {
                    return Err(outside());
                }
            }
        }
    };
    let mut full = canon;
    for r in rest.into_iter().rev() {
        full.push(r);
    }
    let rel = full.strip_prefix(&wd).map_err(|_| outside())?.to_path_buf();
    if !is_plain_relative(&rel) || rel.starts_with(".git") {
        return Err(outside());
    }
    Ok(rel)
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
        let blob = repo.find_blob(id)?;
        out.files.insert(
            PathBuf::from(path),
            String::from_utf8_lossy(blob.content()).into_owned(),
        );
    }
    Ok(out)
}

fn index_entry(path: &str, id: Oid, mode: u32, size: usize) -> IndexEntry {
    IndexEntry {
        ctime: IndexTime::new(0, 0),
        mtime: IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: size as u32,
        id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
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

/// The generated commit message: a subject line summarising the change, then one bullet per changed object, per
/// extra path, and the worst-case $/h totals per cluster.
pub fn commit_message(old: &OutputTree, new: &OutputTree, extra_changed: &[PathBuf]) -> String {
    let objects = semantic_changes(old, new);
    let costs: Vec<_> = cluster_costs(old, new)
        .into_iter()
        .filter(|c| c.measure == CostMeasure::WorstCase && c.old != c.new)
        .collect();
    let clusters: BTreeSet<&str> = objects
        .iter()
        .map(|o| o.cluster.as_str())
        .filter(|c| !c.is_empty())
        .collect();
    let count = |k| objects.iter().filter(|o| o.change == k).count();
    let (added, modified, removed) = (
        count(crate::emit::ChangeKind::Added),
        count(crate::emit::ChangeKind::Modified),
        count(crate::emit::ChangeKind::Removed),
    );
    let mut counts = Vec::new();
    for (n, w) in [
        (added, "added"),
        (modified, "changed"),
        (removed, "removed"),
    ] {
        if n > 0 {
            counts.push(format!("{n} {w}"));
        }
    }
    let scope = match clusters.len() {
        0 => String::new(),
        1..=3 => format!(
            "{}: ",
            clusters.iter().copied().collect::<Vec<_>>().join(", ")
        ),
        n => format!("{n} clusters: "),
    };
    let mut subject = if !counts.is_empty() {
        format!("gpuplan: {scope}{}", counts.join(", "))
    } else if !extra_changed.is_empty() {
        format!(
            "gpuplan: update {}",
            extra_changed
                .iter()
                .map(|p| slash(p))
                .collect::<Vec<_>>()
                .join(", ")
        )
    } else {
        "gpuplan: regenerate out/".to_owned()
    };
    let total_delta: f64 = costs
        .iter()
        .map(|c| c.new.unwrap_or(0.0) - c.old.unwrap_or(0.0))
        .sum();
    if !costs.is_empty()
        && format!("{total_delta:.2}") != "0.00"
        && format!("{total_delta:.2}") != "-0.00"
    {
        let sign = if total_delta < 0.0 { "-" } else { "+" };
        subject.push_str(&format!(", worst case {sign}${:.2}/h", total_delta.abs()));
    }
    let mut body = Vec::new();
    for o in &objects {
        if clusters.len() > 1 {
            body.push(format!("- {}: {}", o.cluster, o.summary));
        } else {
            body.push(format!("- {}", o.summary));
        }
    }
    for p in extra_changed {
        body.push(format!("- {}", slash(p)));
    }
    let mut msg = subject;
    if !body.is_empty() {
        msg.push_str("\n\n");
        msg.push_str(&body.join("\n"));
    }
    if !costs.is_empty() {
        msg.push_str("\n\n");
        let lines: Vec<String> = costs
            .iter()
            .map(|c| {
                let f = |v: Option<f64>| v.map_or("none".to_owned(), |v| format!("{v:.2}"));
                format!("Worst case $/h {}: {} → {}", c.cluster, f(c.old), f(c.new))
            })
            .collect();
        msg.push_str(&lines.join("\n"));
    }
    msg.push('\n');
    msg
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
    let (repo, workdir) = open_repository(repo_dir)?;
    let out_rel = repo_relative(&workdir, out_dir)?;
    let out_prefix = slash(&out_rel);
    check_output_paths(tree, out_dir)?;
    let extras = extra_paths(&workdir, &out_prefix, &opts.extra_paths)?;

    let target = resolve_target(&repo, &workdir, opts.branch.as_deref())?;
    let parent = parent_commit(&repo, &target)?;
    let base_tree = parent.as_ref().map(|c| c.tree()).transpose()?;
    let old_out = tree_from_git(&repo, base_tree.as_ref(), &out_rel)?;
    let abs_out = workdir.join(&out_rel);
    refuse_unsafe_changes(opts, &target, &abs_out, out_dir, &old_out, tree)?;
    let (author, committer) = signature(&repo)?;
    // The last check, and the first thing held: nothing is written while git (or anyone) holds the index.
    let index_lock = match target {
        Target::Head => Some(IndexLock::acquire(&repo)?),
        Target::Branch { .. } => None,
    };

    let new_tree_id = commit_tree(&repo, &workdir, base_tree.as_ref(), &out_prefix, tree, &extras)?;
    let new_tree = repo.find_tree(new_tree_id)?;
    let unchanged = match &base_tree {
        Some(t) => t.id() == new_tree_id,
        None => new_tree.is_empty(),
    };
    let files = changed_paths(&repo, base_tree.as_ref(), &new_tree)?;

    let worktree_updated = matches!(target, Target::Head);
    // out/ swapped in with the previous tree kept, so that a failure from here on can put it back.
    let swap = match worktree_updated {
        true => Some(write_tree_swapped(&abs_out, tree).map_err(|source| GitopsError::Write {
            out_dir: out_dir.to_path_buf(),
            source,
        })?),
        false => None,
    };
    let ours = Ours { workdir: &workdir, out_prefix: &out_prefix, tree, extras: &extras, new_tree: &new_tree };
    if unchanged {
        let staged = index_lock.map(|lock| lock.stage(&ours)).transpose();
        return finish(swap, staged.and_then(|s| s.map(IndexLock::install).transpose()).map(|_| CommitOutcome::NothingToCommit));
    }

    let extra_changed: Vec<PathBuf> = files.iter().filter(|p| extras.contains(&slash(p))).cloned().collect();
    let message = match &opts.message {
        Some(m) => m.clone(),
        None => commit_message(&old_out, tree, &extra_changed),
    };
    let (reference, update_ref) = reference_names(&repo, &target)?;
    // The new index goes into the index lock before the ref moves, and is installed (one rename) right after.
    let staged = match index_lock.map(|lock| lock.stage(&ours)).transpose() {
        Ok(staged) => staged,
        Err(e) => return finish(swap, Err(e)),
    };
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    // libgit2 moves `update_ref` only if it still points at the first parent ("current tip is not the first
    // parent" otherwise, git_commit_create in libgit2's commit.c): a ref moved by someone else since we read it
    // fails here, before anything else changed.
    let id = match repo.commit(Some(&update_ref), &author, &committer, &message, &new_tree, &parents) {
        Ok(id) => id,
        Err(e) => return finish(swap, Err(e.into())),
    };
    if let Some(staged) = staged
        && let Err(e) = staged.install()
    {
        // Undo the ref move so that the error and the repository agree.
        let undone = undo_ref(&repo, &update_ref, parent.as_ref().map(|c| c.id()), id);
        return finish(swap, Err(undone.err().unwrap_or(e)));
    }
    finish(swap, Ok(CommitOutcome::Committed { id: id.to_string(), files, message, reference, worktree_updated }))
}

/// The repository holding `repo_dir`, and its work tree; refused while a merge, rebase, … is in progress.
fn open_repository(repo_dir: &Path) -> Result<(Repository, PathBuf), GitopsError> {
    let repo = Repository::discover(repo_dir).map_err(|source| GitopsError::NotARepository { path: repo_dir.to_path_buf(), source })?;
    let workdir = repo.workdir().ok_or_else(|| GitopsError::BareRepository(repo.path().to_path_buf()))?.to_path_buf();
    if let Some(state) = state_name(repo.state()) {
        return Err(GitopsError::RepositoryBusy(state.to_owned()));
    }
    Ok((repo, workdir))
}

/// Every generated path stays inside out/.
fn check_output_paths(tree: &OutputTree, out_dir: &Path) -> Result<(), GitopsError> {
    match tree.files.keys().find(|p| !is_plain_relative(p)) {
        Some(p) => Err(GitopsError::Write {
            out_dir: out_dir.to_path_buf(),
            source: io::Error::new(io::ErrorKind::InvalidInput, format!("bad output path {}", p.display())),
        }),
        None => Ok(()),
    }
}

/// The extra paths (refreshed catalogs) as repository-relative slash paths, those under out/ left out (out/ is
/// committed anyway); a path outside the repository or inside `.git` is refused.
fn extra_paths(workdir: &Path, out_prefix: &str, paths: &[PathBuf]) -> Result<BTreeSet<String>, GitopsError> {
    let mut extras = BTreeSet::new();
    for p in paths {
        let p = if p.is_absolute() {
            repo_relative(workdir, p).map_err(|_| GitopsError::InvalidExtraPath { path: p.clone(), reason: "not inside the repository".into() })?
        } else {
            p.clone()
        };
        if !is_plain_relative(&p) || p.starts_with(".git") {
            return Err(GitopsError::InvalidExtraPath { path: p, reason: "must be a path inside the repository, relative to its root".into() });
        }
        let s = slash(&p);
        if s != out_prefix && !s.starts_with(&format!("{out_prefix}/")) {
            extras.insert(s);
        }
    }
    Ok(extras)
}

/// out/ as the commit `commit` would go on holds it (HEAD's, or the target branch's tip): what the GitOps tool
/// applied, for the checks that compare the new objects with the ones they update (`emit::transition`).
pub fn base_out(repo_dir: &Path, out_dir: &Path, branch: Option<&str>) -> Result<OutputTree, GitopsError> {
    let (repo, workdir) = open_repository(repo_dir)?;
    let out_rel = repo_relative(&workdir, out_dir)?;
    let target = resolve_target(&repo, &workdir, branch)?;
    let base_tree = parent_commit(&repo, &target)?.map(|c| c.tree()).transpose()?;
    Ok(tree_from_git(&repo, base_tree.as_ref(), &out_rel)?)
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

/// Hand edits in out/ (unless `--force`) and removed NodePools (unless allowed) are refused before anything is
/// written.
fn refuse_unsafe_changes(opts: &CommitOptions, target: &Target, abs_out: &Path, out_dir: &Path, old_out: &OutputTree, tree: &OutputTree) -> Result<(), GitopsError> {
    if !opts.force {
        let current = match target {
            Target::Head => read_tree(abs_out).map_err(|source| GitopsError::Read { path: abs_out.to_path_buf(), source })?,
            Target::Branch { .. } => old_out.clone(),
        };
        let edits = hand_edits(&current);
        if !edits.is_empty() {
            return Err(GitopsError::HandEdited { out_dir: out_dir.to_path_buf(), files: edits });
        }
    }
    if !opts.allow_removal {
        let removed = removed_node_pools(old_out, tree);
        if !removed.is_empty() {
            return Err(GitopsError::NodePoolRemoval(removed));
        }
    }
    Ok(())
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
            let bytes = fs::read(&full).map_err(read_error)?;
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

/// (the ref the report names, the ref the commit updates).
fn reference_names(repo: &Repository, target: &Target) -> Result<(String, String), GitopsError> {
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
fn undo_ref(repo: &Repository, update_ref: &str, parent: Option<Oid>, ours: Oid) -> Result<(), GitopsError> {
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

/// What our paths are: out/ (as the tree) and the extra paths, with the commit's tree for their ids.
struct Ours<'a> {
    workdir: &'a Path,
    out_prefix: &'a str,
    tree: &'a OutputTree,
    extras: &'a BTreeSet<String>,
    new_tree: &'a Tree<'a>,
}

/// The repository index, locked the way git locks it: `index.lock` created exclusively, the new index written
/// into it, then renamed over `index` to commit or deleted to roll back (git's lockfile API,
/// Documentation/technical/api-lockfile.txt; libgit2's `git_filebuf` follows it and fails with GIT_ELOCKED when
/// the lock exists). Holding it from before the first change to the last keeps git and other tools from writing
/// the index in between, and makes the index update one rename.
struct IndexLock {
    index: PathBuf,
    lock: PathBuf,
    /// A copy of the index that libgit2 edits before it is moved into the lock.
    scratch: PathBuf,
}

impl IndexLock {
    fn acquire(repo: &Repository) -> Result<IndexLock, GitopsError> {
        let index = repo.path().join("index");
        let lock = repo.path().join("index.lock");
        let scratch = repo.path().join(format!("gpuplan-index-{}", std::process::id()));
        match fs::OpenOptions::new().write(true).create_new(true).open(&lock) {
            Ok(_) => Ok(IndexLock { index, lock, scratch }),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Err(GitopsError::IndexLocked(lock)),
            Err(source) => Err(GitopsError::Read { path: lock, source }),
        }
    }

    /// Writes the current index with our paths brought in line with the new commit into the lock file.
    fn stage(self, ours: &Ours<'_>) -> Result<IndexLock, GitopsError> {
        match fs::copy(&self.index, &self.scratch) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => return Err(GitopsError::Read { path: self.index.clone(), source }),
        }
        // libgit2 opens a missing index file as an empty index.
        let mut index = Index::open(&self.scratch)?;
        update_entries(&mut index, ours)?;
        index.write()?;
        fs::rename(&self.scratch, &self.lock).map_err(|source| GitopsError::Read { path: self.lock.clone(), source })?;
        Ok(self)
    }

    /// Commits the staged index: one rename.
    fn install(self) -> Result<(), GitopsError> {
        fs::rename(&self.lock, &self.index).map_err(|source| GitopsError::Read { path: self.index.clone(), source })?;
        std::mem::forget(self);
        Ok(())
    }
}

impl Drop for IndexLock {
    /// Not installed: the index stays as it was.
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.scratch);
        let _ = fs::remove_file(&self.lock);
    }
}

/// Makes `index` agree with the new commit for our paths only (out/ and the extra paths); every other entry,
/// staged or not, is left as it was. Entries carry the work-tree files' stat data, as `git add` records it, so
/// `git status` sees them clean without re-reading them.
fn update_entries(index: &mut Index, ours: &Ours<'_>) -> Result<(), GitopsError> {
    let out_prefix = ours.out_prefix;
    let generated: BTreeSet<String> = ours.tree.files.keys().map(|p| format!("{out_prefix}/{}", slash(p))).collect();
    let stale: Vec<String> = index
        .iter()
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| (*p == out_prefix || p.starts_with(&format!("{out_prefix}/"))) && !generated.contains(p))
        .collect();
    for p in stale {
        index.remove_path(Path::new(&p))?;
    }
    for p in generated.iter().chain(ours.extras) {
        match ours.new_tree.get_path(Path::new(p)) {
            Ok(entry) => {
                let mut e = index_entry(p, entry.id(), entry.filemode() as u32, 0);
                stat_into(&mut e, &ours.workdir.join(p));
                index.add(&e)?;
            }
            Err(_) => {
                let _ = index.remove_path(Path::new(p));
            }
        }
    }
    Ok(())
}

/// The work-tree file's stat data into an index entry (what libgit2's `git_index_add_bypath` records).
fn stat_into(entry: &mut IndexEntry, path: &Path) {
    let Ok(m) = fs::symlink_metadata(path) else { return };
    entry.file_size = m.len() as u32;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        entry.ctime = IndexTime::new(m.ctime() as i32, m.ctime_nsec() as u32);
        entry.mtime = IndexTime::new(m.mtime() as i32, m.mtime_nsec() as u32);
        entry.dev = m.dev() as u32;
        entry.ino = m.ino() as u32;
        entry.uid = m.uid();
        entry.gid = m.gid();
    }
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
