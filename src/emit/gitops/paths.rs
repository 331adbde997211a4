//! The paths a commit writes: out/ relative to the work tree, and the extra paths.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use super::error::GitopsError;
use crate::layout::OutputTree;

/// Where a commit writes, resolved and checked before anything is read from git.
pub(super) struct CommitPaths {
    /// The work tree.
    pub(super) workdir: PathBuf,
    /// out/ as the caller named it (the messages name it so).
    pub(super) out_dir: PathBuf,
    /// out/ relative to the work tree.
    pub(super) out_rel: PathBuf,
    /// `out_rel` as a slash path: the prefix of out/'s entries in git.
    pub(super) out_prefix: String,
    /// out/ in the work tree.
    pub(super) abs_out: PathBuf,
    /// The extra paths, as repository-relative slash paths.
    pub(super) extras: BTreeSet<String>,
}

impl CommitPaths {
    /// out/ inside the work tree, every generated path inside out/, and the extra paths inside the repository;
    /// checked in that order, so the first refusal is the one reported.
    pub(super) fn resolve(workdir: &Path, out_dir: &Path, tree: &OutputTree, extra: &[PathBuf]) -> Result<CommitPaths, GitopsError> {
        let out_rel = repo_relative(workdir, out_dir)?;
        let out_prefix = slash(&out_rel);
        check_output_paths(tree, out_dir)?;
        let extras = repository_paths(workdir, &out_prefix, extra)?;
        let abs_out = workdir.join(&out_rel);
        Ok(CommitPaths { workdir: workdir.to_path_buf(), out_dir: out_dir.to_path_buf(), out_rel, out_prefix, abs_out, extras })
    }
}

pub(super) fn slash(p: &Path) -> String {
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
pub(super) fn repo_relative(workdir: &Path, out_dir: &Path) -> Result<PathBuf, GitopsError> {
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
pub(super) fn repository_paths(workdir: &Path, out_prefix: &str, paths: &[PathBuf]) -> Result<BTreeSet<String>, GitopsError> {
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
