//! What can stop a commit, each message saying what to do.

use std::io;
use std::path::{Path, PathBuf};

use crate::emit::diff::{REMOVAL_WARNING, RemovedNodePool};
use crate::emit::HandEdit;
use crate::layout::HeaderStatus;

fn removal_message(removed: &[RemovedNodePool]) -> String {
    let list: Vec<String> = removed.iter().map(|r| format!("  {r}")).collect();
    format!("this change removes {} NodePool(s):\n{}\n{REMOVAL_WARNING}; nothing was written or committed: pass --allow-removal to commit it", removed.len(), list.join("\n"))
}
fn uncommitted_message(inputs: &[(PathBuf, &str)]) -> String {
    let list: Vec<String> = inputs.iter().map(|(p, state)| format!("  {} ({state})", p.display())).collect();
    format!(
        "out/ was compiled from {} file(s) with changes that are not committed:\n{}\na commit of out/ without them would fail `gpuplan compile --check`; nothing was written or committed: commit them first, or pass --include-inputs to commit them with out/",
        inputs.len(),
        list.join("\n")
    )
}

/// Errors of `commit`; each message says what to do.
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
    #[error("{}", uncommitted_message(.0))]
    UncommittedInputs(Vec<(PathBuf, &'static str)>),
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
    #[error("{}", unknown_revision_message(rev, *shallow, source))]
    UnknownRevision {
        rev: String,
        shallow: bool,
        #[source]
        source: git2::Error,
    },
    #[error("git: {0}")]
    Git(#[from] git2::Error),
}

/// A base revision this clone does not hold: a shallow clone (actions/checkout's default depth 1) has one commit.
fn unknown_revision_message(rev: &str, shallow: bool, source: &git2::Error) -> String {
    let clone = if shallow { "this is a shallow clone, which holds only the commits it fetched" } else { "this clone does not hold it" };
    let fetch = match rev.strip_prefix("origin/") {
        Some(branch) => format!("git fetch --no-tags --depth=1 origin {branch}:refs/remotes/origin/{branch}"),
        None if matches!(rev.len(), 40 | 64) && rev.chars().all(|c| c.is_ascii_hexdigit()) => format!("git fetch --no-tags --depth=1 origin {rev}"),
        None => format!("git fetch --no-tags --depth=1 origin {rev}, then pass --base FETCH_HEAD"),
    };
    format!("cannot read the base revision `{rev}` ({}): {clone}. Fetch it first: {fetch}", source.message())
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
