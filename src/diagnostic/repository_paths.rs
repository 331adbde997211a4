//! Profile paths as generated files write them: relative to the repository holding the profile, whatever the
//! working directory and however the path was typed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Resolves profile paths as they appear in generated files: relative to the root of the git repository holding
/// the file, with `.` and `..` resolved and `/` separators. `profiles/x.kdl`, `./profiles/x.kdl` and
/// `/home/me/repo/profiles/x.kdl` all give `profiles/x.kdl`, so out/ is byte-identical however the path was typed
/// and wherever the repository is checked out.
///
/// Outside any repository (a tarball or an export of one), relative to the parent of the directory holding the
/// profile: the directory a `profiles` argument names, or a file argument's own directory (directories are read
/// one level deep). `/tmp/copy/profiles/x.kdl` gives `profiles/x.kdl` from any working directory, which is also
/// what the repository itself records for its `profiles/`. Never relative to the working directory: then
/// `compile --check` run from elsewhere would call a current out/ stale.
///
/// One resolver serves many files (on every core): the working directory is read once, and each directory's
/// canonical path and repository root are looked up once. A dozen system calls per file took longer than parsing
/// the profiles (perf, 1,000 profiles: 2.1% of the CPU, against 1.7% for parsing).
pub struct RepositoryPaths {
    cwd: PathBuf,
    /// Directory as given → its canonical path.
    dirs: Mutex<BTreeMap<PathBuf, Option<PathBuf>>>,
    /// Canonical directory → the nearest directory at or above it holding `.git`.
    roots: Mutex<BTreeMap<PathBuf, Option<PathBuf>>>,
}

impl Default for RepositoryPaths {
    fn default() -> RepositoryPaths {
        RepositoryPaths::new()
    }
}

impl RepositoryPaths {
    /// A resolver for paths relative to the working directory as it is now.
    pub fn new() -> RepositoryPaths {
        let cwd = std::env::current_dir().unwrap_or_default();
        RepositoryPaths { cwd, dirs: Mutex::default(), roots: Mutex::default() }
    }

    /// The path of the file `path` names, as generated files write it.
    pub fn resolve(&self, path: &Path) -> String {
        let absolute = self.canonical(path);
        let root = absolute.parent().and_then(|dir| cached(&self.roots, dir, || crate::confine::git_top(dir).map(Path::to_path_buf)));
        let base = root.or_else(|| absolute.parent().and_then(Path::parent).map(Path::to_path_buf));
        let relative = base.as_deref().and_then(|b| absolute.strip_prefix(b).ok()).unwrap_or(&absolute);
        let parts: Vec<String> = relative
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        if relative.is_absolute() { format!("/{}", parts.join("/")) } else { parts.join("/") }
    }

    /// Symlinks resolved when the file exists (a checkout under a symlinked home must not change the output). A file
    /// that is not itself a symlink resolves through its directory. (Profile paths name files: a directory path with
    /// a trailing slash that names a symlink, `linkdir/`, would resolve to the link's directory, not its target.)
    fn canonical(&self, path: &Path) -> PathBuf {
        let through_dir = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_symlink()) => {
                let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
                cached(&self.dirs, dir, || std::fs::canonicalize(dir).ok()).map(|d| d.join(name))
            }
            _ => None,
        };
        through_dir.or_else(|| std::fs::canonicalize(path).ok()).unwrap_or_else(|| lexically_normal(&self.cwd.join(path)))
    }
}

/// `compute(key)`, remembered in `cache`.
fn cached(cache: &Mutex<BTreeMap<PathBuf, Option<PathBuf>>>, key: &Path, compute: impl FnOnce() -> Option<PathBuf>) -> Option<PathBuf> {
    if let Some(hit) = cache.lock().expect("not poisoned").get(key) {
        return hit.clone();
    }
    let value = compute();
    cache.lock().expect("not poisoned").insert(key.to_path_buf(), value.clone());
    value
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn lexically_normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::RepositoryPaths;

    /// However a profile's path is written, and whichever of a repository's files are symlinks, one resolver (with its
    /// per-directory caches warm) gives the path in the repository that holds the file.
    #[test]
    fn repository_paths_resolve_every_spelling_to_the_same_path() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let repo = root.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("profiles/team")).unwrap();
        std::fs::write(repo.join("profiles/a.kdl"), "").unwrap();
        std::fs::write(repo.join("profiles/team/b.kdl"), "").unwrap();
        // Outside the repository, a symlink to a file in it, next to a plain file.
        std::fs::create_dir_all(root.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(repo.join("profiles/a.kdl"), root.join("elsewhere/link.kdl")).unwrap();
        std::fs::write(root.join("elsewhere/own.kdl"), "").unwrap();

        let resolver = RepositoryPaths::new();
        for _ in 0..2 {
            for spelling in ["profiles/a.kdl", "profiles/./a.kdl", "profiles/team/../a.kdl", "elsewhere/link.kdl"] {
                let path = if spelling.starts_with("elsewhere") { root.join(spelling) } else { repo.join(spelling) };
                assert_eq!(resolver.resolve(&path), "profiles/a.kdl", "{spelling}");
            }
            assert_eq!(resolver.resolve(&repo.join("profiles/team/b.kdl")), "profiles/team/b.kdl");
            // No repository above it: relative to the parent of its directory, wherever the working directory is.
            assert_eq!(resolver.resolve(&root.join("elsewhere/own.kdl")), "elsewhere/own.kdl");
            // A file that does not exist resolves lexically.
            assert_eq!(resolver.resolve(&repo.join("profiles/team/../missing.kdl")), "profiles/missing.kdl");
        }
    }
}
