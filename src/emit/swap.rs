//! Replacing out/ as one step, and cleaning up after a writer that was killed.
//!
//! A new tree is written into `.<out>.gpuplan-new-<pid>-<n>` beside out/ (same file system) and then exchanged
//! with out/. On Linux the exchange is one `renameat2(RENAME_EXCHANGE)`, which "atomically exchange[s] oldpath and
//! newpath. Both pathnames must exist but may be of different types" (renameat2(2)): at every instant out/ exists
//! and holds either the old or the new tree. Where that call is missing or the file system refuses it (EINVAL,
//! ENOSYS, EOPNOTSUPP: renameat2(2), "ERRORS"), and on other systems, the swap is two renames (out/ → backup,
//! new → out/), and a kill between them leaves no out/: [`remove_stale`] puts the backup back on the next run.
//!
//! The previous tree is kept until [`Swap::finish`], so a caller that fails after the swap (`commit`, when the ref
//! update fails) can put it back with [`Swap::rollback`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// Tag of the directory a new tree is written into.
pub const NEW_TAG: &str = "gpuplan-new";
/// Tag of the directory holding the previous tree during a two-rename swap.
pub const OLD_TAG: &str = "gpuplan-old";
/// Name of the previous tree inside an [`OLD_TAG`] directory.
const OLD_NAME: &str = "old";

/// Where out/ really is: a symlinked out/ is resolved (its target is replaced, the link kept), and the directory
/// holding it and out/'s own name, which every temporary directory and the writer lock are named after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutPlace {
    pub dir: PathBuf,
    pub parent: PathBuf,
    pub stem: String,
}

impl OutPlace {
    pub fn of(out_dir: &Path) -> io::Result<OutPlace> {
        // Before the link is resolved (its target is never named) and before anything beside out/ is created: the
        // new tree, the backup and the lock go where out/ really is.
        crate::confine::check_replace(out_dir)?;
        let dir = match fs::symlink_metadata(out_dir) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(out_dir)?,
            _ => out_dir.to_path_buf(),
        };
        let stem = dir
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("{} has no file name", dir.display())))?
            .to_string_lossy()
            .into_owned();
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(OutPlace { dir, parent, stem })
    }

    /// `.<stem>.<tag>-`: the start of every temporary directory of this out/ with that tag.
    fn prefix(&self, tag: &str) -> String {
        format!(".{}.{tag}-", self.stem)
    }

    /// Creates a fresh `<parent>/.<stem>.<tag>-<pid>-<n>` with the process umask's permissions.
    pub fn create_temp_dir(&self, tag: &str) -> io::Result<TempDir> {
        let pid = std::process::id();
        for n in 0..10_000u32 {
            let path = self.parent.join(format!("{}{pid}-{n}", self.prefix(tag)));
            match fs::create_dir(&path) {
                Ok(()) => return Ok(TempDir(Some(path))),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "could not create a temporary directory beside out/"))
    }
}

/// A directory removed (recursively) on drop unless [`TempDir::keep`] was called.
pub struct TempDir(Option<PathBuf>);

impl TempDir {
    pub fn path(&self) -> &Path {
        self.0.as_deref().expect("not yet kept")
    }

    /// Leaves the directory on disk (it was renamed into place, or holds something to keep).
    pub fn keep(mut self) -> PathBuf {
        self.0.take().expect("not yet kept")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(p) = self.0.take() {
            let _ = fs::remove_dir_all(p);
        }
    }
}

/// Exchanges two existing paths in one step; `Ok(false)` when this system or file system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    use rustix::fs::{CWD, RenameFlags, renameat_with};
    use rustix::io::Errno;
    match renameat_with(CWD, a, CWD, b, RenameFlags::EXCHANGE) {
        Ok(()) => Ok(true),
        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<bool> {
    Ok(false)
}

/// out/ after the swap; the previous tree is kept until [`Swap::finish`] (or dropped) and restored by
/// [`Swap::rollback`].
pub struct Swap {
    out_dir: PathBuf,
    parent: PathBuf,
    /// The temporary directory holding the previous tree, and the tree's path (the directory itself after an
    /// exchange, `<dir>/old` after two renames). `None` when out/ did not exist, or nothing was swapped.
    previous: Option<(TempDir, PathBuf)>,
    /// Whether out/ was created by the swap (it did not exist before).
    created: bool,
}

impl Swap {
    /// Nothing was swapped (out/ already held the tree).
    pub fn unchanged(out_dir: &Path) -> Swap {
        Swap { out_dir: out_dir.to_path_buf(), parent: PathBuf::from("."), previous: None, created: false }
    }

    /// Swaps the fully written, durable `staging` directory in for `place.dir` (which may not exist).
    pub fn install(place: &OutPlace, staging: TempDir, existing: bool) -> io::Result<Swap> {
        let out_dir = place.dir.clone();
        let parent = place.parent.clone();
        if !existing {
            fs::rename(staging.path(), &out_dir)?;
            staging.keep();
            sync_dir(&parent)?;
            return Ok(Swap { out_dir, parent, previous: None, created: true });
        }
        if exchange(staging.path(), &out_dir)? {
            // The staging directory now holds the previous tree.
            let path = staging.path().to_path_buf();
            sync_dir(&parent)?;
            return Ok(Swap { out_dir, parent, previous: Some((staging, path)), created: false });
        }
        let holder = place.create_temp_dir(OLD_TAG)?;
        let backup = holder.path().join(OLD_NAME);
        fs::rename(&out_dir, &backup)?;
        if let Err(e) = fs::rename(staging.path(), &out_dir) {
            // Put the original back; if even that fails, say where it is (and keep it there).
            if let Err(e2) = fs::rename(&backup, &out_dir) {
                let kept = holder.keep();
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "swapping in the new {} failed ({e}) and restoring it failed ({e2}); the previous content is in {}",
                        out_dir.display(),
                        kept.join(OLD_NAME).display()
                    ),
                ));
            }
            return Err(e);
        }
        staging.keep();
        sync_dir(&parent)?;
        Ok(Swap { out_dir, parent, previous: Some((holder, backup)), created: false })
    }

    /// Keeps the new tree and removes the previous one.
    pub fn finish(self) {
        drop(self);
    }

    /// Puts the previous tree back (or removes out/ when there was none), the same way it was swapped out.
    pub fn rollback(mut self) -> io::Result<()> {
        match self.previous.take() {
            Some((holder, old)) => {
                if !exchange(&old, &self.out_dir)? {
                    // A sibling of the previous tree: inside the holder after two renames, and named like a stale
                    // temporary directory otherwise, so it is removed now or by the next run.
                    let mut name = old.file_name().unwrap_or_default().to_os_string();
                    name.push("-rolled-back");
                    let aside = old.with_file_name(name);
                    fs::rename(&self.out_dir, &aside)?;
                    fs::rename(&old, &self.out_dir)?;
                    let _ = fs::remove_dir_all(&aside);
                }
                // After an exchange `holder` holds the new tree: removed on drop.
                drop(holder);
            }
            None if self.created => fs::remove_dir_all(&self.out_dir)?,
            None => {}
        }
        sync_dir(&self.parent)
    }
}

pub fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// What [`remove_stale`] found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stale {
    /// Temporary directories removed.
    pub removed: Vec<PathBuf>,
    /// The backup put back as out/ (a two-rename swap was killed between its renames).
    pub restored: Option<PathBuf>,
}

/// Removes the temporary directories of this out/ that a killed writer left (`.<out>.gpuplan-new-*` and
/// `-old-*`), and puts a backup back when out/ is missing. Only safe under the writer lock (`emit::lock`, which
/// calls this): every writer holds it while its own temporary directories exist, so any found then belongs to a
/// process that is gone.
pub fn remove_stale(out_dir: &Path) -> io::Result<Stale> {
    let place = OutPlace::of(out_dir)?;
    let (new, old) = (place.prefix(NEW_TAG), place.prefix(OLD_TAG));
    let mut found: Vec<PathBuf> = match fs::read_dir(&place.parent) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(&new) || n.starts_with(&old)))
            .map(|e| e.path())
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Stale::default()),
        Err(e) => return Err(e),
    };
    found.sort();
    let mut stale = Stale::default();
    if fs::symlink_metadata(&place.dir).is_err() {
        // The newest complete backup (a new tree may have been cut short while being written: never that one).
        // Real directories only, never through a link: a pull request can commit a `.out.gpuplan-old-1` link whose
        // target holds an `old` directory, which the rename would then move into the repository.
        let real_dir = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_dir());
        let backup = found.iter().rev().filter(|d| real_dir(d)).map(|d| d.join(OLD_NAME)).find(|b| real_dir(b));
        if let Some(backup) = backup {
            fs::rename(&backup, &place.dir)?;
            stale.restored = Some(backup);
        }
    }
    for dir in found {
        fs::remove_dir_all(&dir)?;
        stale.removed.push(dir);
    }
    Ok(stale)
}
