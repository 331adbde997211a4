//! The repository index: locked the way git locks it, and brought in line with the new commit for our paths only.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use git2::{Index, IndexEntry, IndexTime, Oid, Repository, Tree};

use super::error::GitopsError;
use super::paths::{CommitPaths, slash};
use crate::layout::OutputTree;

/// An index entry with no stat data.
pub(super) fn index_entry(path: &str, id: Oid, mode: u32, size: usize) -> IndexEntry {
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

/// What our paths are: out/ (as the tree) and the extra paths, with the commit's tree for their ids.
pub(super) struct Ours<'a> {
    pub(super) paths: &'a CommitPaths,
    pub(super) tree: &'a OutputTree,
    pub(super) new_tree: &'a Tree<'a>,
}

/// The repository index, locked the way git locks it: `index.lock` created exclusively, the new index written
/// into it, then renamed over `index` to commit or deleted to roll back (git's lockfile API,
/// Documentation/technical/api-lockfile.txt; libgit2's `git_filebuf` follows it and fails with GIT_ELOCKED when
/// the lock exists). Holding it from before the first change to the last keeps git and other tools from writing
/// the index in between, and makes the index update one rename.
pub(super) struct IndexLock {
    index: PathBuf,
    lock: PathBuf,
    /// A copy of the index that libgit2 edits before it is moved into the lock.
    scratch: PathBuf,
}

impl IndexLock {
    pub(super) fn acquire(repo: &Repository) -> Result<IndexLock, GitopsError> {
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
    pub(super) fn stage(self, ours: &Ours<'_>) -> Result<IndexLock, GitopsError> {
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
    pub(super) fn install(self) -> Result<(), GitopsError> {
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
    let out_prefix = ours.paths.out_prefix.as_str();
    let generated: BTreeSet<String> = ours.tree.files.keys().map(|p| format!("{out_prefix}/{}", slash(p))).collect();
    let stale: Vec<String> = index
        .iter()
        .map(|e| String::from_utf8_lossy(&e.path).into_owned())
        .filter(|p| (*p == out_prefix || p.starts_with(&format!("{out_prefix}/"))) && !generated.contains(p))
        .collect();
    for p in stale {
        index.remove_path(Path::new(&p))?;
    }
    for p in generated.iter().chain(&ours.paths.extras) {
        match ours.new_tree.get_path(Path::new(p)) {
            Ok(entry) => {
                let mut e = index_entry(p, entry.id(), entry.filemode() as u32, 0);
                stat_into(&mut e, &ours.paths.workdir.join(p));
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
