//! Confinement: every path gpuplan reads or writes stays inside the repository root, so that a pull request (which
//! controls the repository's files, never the command line CI runs) cannot make a run read, print or write anything
//! else on the runner. The one place the rule is decided; [`crate::input::read`] (every file read), out/'s writer
//! and lock (`crate::emit`), and the command line's other writers (init, adopt, catalog import/refresh, forecast's
//! picture) call it.
//!
//! The rule ("Everything stays inside the repository" in docs/src/reliability.md):
//! - The root is `--root DIR` when given, else the top of the git work tree holding the working directory, else the
//!   working directory ([`find_root`]).
//! - A path written in a file (gpuplan.kdl's `profiles`, `out`, `catalogs`, `templates`; the demand file's `csv`) is
//!   relative and stays inside the root: an absolute path or a `..` past the root is a located error at that path
//!   ([`check_written`], which says what is wrong and what to do).
//! - Every file read and every directory written is resolved as the kernel walks it (each symlink followed where it
//!   stands, a `..` climbing from where the link led, [`resolve`]) and must land inside the root; a symlink whose
//!   target is outside is named by its own path, never by its target ([`check_read`], [`check_write`]). A dangling
//!   symlink counts as outside: creating through it would write where it points.
//! - The root's `.git/` counts as outside: it is not the pull request's content but the checkout's, and its
//!   `config` holds the CI token (`http.<url>.extraheader`) that `actions/checkout` persists by default.
//! - A path typed on the command line is the caller's choice, not the pull request's: one that lies outside the root
//!   as typed (a shared catalog directory, a scratch directory) is allowed, and what is found under it must stay under
//!   it ([`install`]'s `typed`). Only the command line can widen the rule; no file can.
//! - out/ is read without following links at all (`crate::emit::read_tree`).
//!
//! TOCTOU: a path is resolved and checked, then opened. A process that swaps a component for a symlink between the
//! two wins the race; such a process already runs on the runner with write access to the checkout, which is beyond
//! what a pull request's *content* (fixed before gpuplan starts) can do. Closing the race too would need every open
//! to be `openat2(RESOLVE_BENEATH)` (Linux 5.6+) from a root descriptor; the lock file is opened with `O_NOFOLLOW`.
//!
//! The binary installs the confinement once, before anything is read. A library caller that installs none reads
//! and writes where it is told (the tests compile scratch directories through the library).

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// The rule, as every confinement error states it.
pub const RULE: &str = "gpuplan reads and writes only inside the repository";

/// Where the rule is documented, for the errors' help.
pub const DOCS: &str = "\"Everything stays inside the repository\" in the reliability docs";

/// The installed confinement: the root, and the trees the command line named outside it.
#[derive(Debug)]
struct Confinement {
    /// The root, canonical.
    root: PathBuf,
    /// The working directory (canonical, as the OS reports it), that relative paths are joined to.
    cwd: PathBuf,
    /// What each command-line path outside the root resolves to.
    typed: Vec<PathBuf>,
}

static INSTALLED: OnceLock<Confinement> = OnceLock::new();

/// Directories gpuplan itself made and filled (`diff --base` compiles the base's profiles in one), allowed as the
/// root is: what is in them was written by gpuplan from git objects (a base's symlink becomes its link text).
static SCRATCH: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

/// Allows reading below `dir`, a directory this process created (see [`SCRATCH`]).
pub fn allow_scratch(dir: &Path) -> io::Result<()> {
    let dir = std::fs::canonicalize(dir)?;
    SCRATCH.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(dir);
    Ok(())
}

/// `path` relative to the root, with `.` and `..` applied to the text; None outside it or when none is installed.
pub fn relative_to_root(path: &Path) -> Option<PathBuf> {
    let c = INSTALLED.get()?;
    lexical(&c.cwd, path).strip_prefix(&c.root).ok().map(Path::to_path_buf)
}

/// The root for a run from `cwd`: `explicit` (`--root`) when given, else the top of the git work tree holding `cwd`
/// (the nearest ancestor with a `.git` directory, or file for a linked work tree), else `cwd`.
pub fn find_root(cwd: &Path, explicit: Option<&Path>) -> PathBuf {
    if let Some(root) = explicit {
        return cwd.join(root);
    }
    git_top(cwd).unwrap_or(cwd).to_path_buf()
}

/// The top of the git work tree holding `dir`: the nearest ancestor with a `.git` directory (or file, for a linked
/// work tree). The one place gpuplan looks for it (the root here, the config's search in the command line, the
/// diagnostics' repository-relative paths).
pub fn git_top(dir: &Path) -> Option<&Path> {
    dir.ancestors().find(|a| a.join(".git").exists())
}

/// Installs the confinement for this process: `root`, and the command line's words `typed` (every argument, and
/// the value of each `--flag=value`, and the PATH of `--cluster-state CLUSTER=PATH`); those that name a path outside the root as typed widen it by what they
/// resolve to. Returns the canonical root. A second call changes nothing.
/// The one flag whose value is `NAME=PATH` (`gpuplan diff --cluster-state`).
const CLUSTER_STATE_FLAG: &str = "--cluster-state";

pub fn install(root: &Path, typed: impl IntoIterator<Item = String>) -> io::Result<&'static Path> {
    let cwd = std::env::current_dir()?;
    let root = std::fs::canonicalize(cwd.join(root)).map_err(|e| io::Error::new(e.kind(), format!("the repository root {}: {e}", root.display())))?;
    let mut outside = Vec::new();
    let mut after_cluster_state = false;
    for word in typed {
        let named = std::mem::replace(&mut after_cluster_state, word == CLUSTER_STATE_FLAG) || word.starts_with(&format!("{CLUSTER_STATE_FLAG}="));
        let word = word.split_once('=').filter(|(flag, _)| flag.starts_with("--")).map_or(word.as_str(), |(_, v)| v);
        // `--cluster-state CLUSTER=PATH` names PATH (only that flag's value: elsewhere a word with `=` is a path).
        let word = if named { word.split_once('=').filter(|(name, _)| !name.is_empty() && !name.contains('/')).map_or(word, |(_, v)| v) } else { word };
        if word.is_empty() || (word.starts_with('-') && !word.contains('/')) {
            continue;
        }
        let lexical = lexical(&cwd, Path::new(word));
        if !lexical.starts_with(&root) {
            outside.extend(resolve(&cwd.join(word)).ok());
        }
    }
    Ok(&INSTALLED.get_or_init(|| Confinement { root, cwd, typed: outside }).root)
}

/// The installed root, if any.
pub fn root() -> Option<&'static Path> {
    INSTALLED.get().map(|c| c.root.as_path())
}

/// Refuses a read of `path` that resolves outside the root (see the module doc). A no-op when none is installed.
pub fn check_read(path: &Path) -> io::Result<()> {
    check(path, false)
}

/// Lists directory `path` once [`check_read`] allows it: a directory's entries are its files' names, which a
/// directory outside the repository must not give away either.
pub fn read_dir(path: &Path) -> io::Result<std::fs::ReadDir> {
    check_read(path)?;
    std::fs::read_dir(path)
}

/// Refuses a write to `path` (a file or directory, existing or not) that resolves outside the root. A no-op when
/// none is installed.
pub fn check_write(path: &Path) -> io::Result<()> {
    check(path, false)
}

/// [`check_write`] for a directory replaced whole (out/): the root itself is refused too. A no-op when none is
/// installed.
pub fn check_replace(path: &Path) -> io::Result<()> {
    check(path, true)
}

fn check(path: &Path, write: bool) -> io::Result<()> {
    let Some(c) = INSTALLED.get() else { return Ok(()) };
    match resolve(&c.cwd.join(path)) {
        Ok(resolved) if c.allows(&resolved, write) => Ok(()),
        _ => Err(c.escape(path, write)),
    }
}

impl Confinement {
    fn allows(&self, resolved: &Path, write: bool) -> bool {
        let below = |base: &Path| resolved.strip_prefix(base).is_ok_and(|rel| !in_a_git_dir(rel));
        (below(&self.root) && !(write && resolved == self.root))
            || self.typed.iter().any(|t| below(t))
            || SCRATCH.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().any(|s| below(s))
    }

    /// The error for `path`: naming the first symlink on it that leads outside, else the path itself.
    fn escape(&self, path: &Path, write: bool) -> io::Error {
        let mut prefixes: Vec<&Path> = path.ancestors().filter(|a| !a.as_os_str().is_empty()).collect();
        prefixes.reverse();
        let link = prefixes.into_iter().find(|a| {
            std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink())
                && !resolve(&self.cwd.join(a)).is_ok_and(|r| self.allows(&r, false))
        });
        let resolved = |p: &Path| resolve(&self.cwd.join(p)).ok();
        let (what, help) = match link {
            Some(link) => (format!("{} is a symbolic link that leads {}", link.display(), self.place(resolved(link), "into")), "replace the link with the file or directory itself"),
            None if write && resolved(path).is_some_and(|r| r == self.root) => {
                (format!("{} is the repository root ({}), which gpuplan never replaces", path.display(), self.root.display()), "name a directory inside it")
            }
            None => (format!("{} is {}", path.display(), self.place(resolved(path), "in")), "move it inside the repository"),
        };
        let message = format!("{what}: {RULE} (see {DOCS}); {help}, or name a path outside the repository on the command line");
        io::Error::new(io::ErrorKind::PermissionDenied, message)
    }

    /// Where a refused path lands, as its error says it: the git directory (which holds the checkout's
    /// configuration, a CI token in `extraheader` included) is named as such; anything else is outside.
    fn place(&self, resolved: Option<PathBuf>, preposition: &str) -> String {
        match resolved {
            Some(r) if r.strip_prefix(&self.root).is_ok_and(in_a_git_dir) => format!("{preposition} a git directory (.git), which holds a checkout's configuration and credentials"),
            _ => format!("outside the repository ({})", self.root.display()),
        }
    }
}

/// Whether `rel` (below an allowed base) passes through a git directory: `.git` at any depth (a second repository
/// checked out inside the work tree keeps its token in its own `.git/config`), in any case (`.GIT` is `.git` on a
/// case-insensitive file system). git tracks no path through one, so no pull request's content lives there.
fn in_a_git_dir(rel: &Path) -> bool {
    rel.components().any(|c| c.as_os_str().to_str().is_some_and(|name| name.eq_ignore_ascii_case(".git")))
}

/// Checks a path written in a file (`written`, relative to `base`, the file's directory): Err with what is wrong and
/// what to do when it is absolute or climbs past the root with `..`. Symlinks are checked when the path is read or
/// written. A no-op when no confinement is installed.
pub fn check_written(written: &str, base: &Path) -> Result<(), (String, String)> {
    let Some(c) = INSTALLED.get() else { return Ok(()) };
    let help = format!("{RULE} (see {DOCS}): write a path relative to this file's directory that stays inside the repository, or name a path outside on the command line");
    if Path::new(written).is_absolute() || Path::new(written).has_root() {
        return Err((format!("`{}` is an absolute path, and a path written in a file must stay inside the repository", shorten(written)), help));
    }
    let lexical = lexical(&c.cwd, &base.join(written));
    let scratch = SCRATCH.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().any(|s| lexical.starts_with(s));
    if !lexical.starts_with(&c.root) && !scratch {
        return Err((format!("`{}` leads outside the repository through `..`", shorten(written)), help));
    }
    Ok(())
}

/// A written path as an error quotes it: its first 80 characters.
fn shorten(written: &str) -> String {
    let mut shown: String = written.chars().take(80).collect();
    if shown.len() < written.len() {
        shown.push('…');
    }
    shown
}

/// `path` joined to `cwd` with `.` and `..` applied to the text, as the shell's `cd -L` does (symlinks are resolved
/// by [`resolve`] afterwards).
fn lexical(cwd: &Path, path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in cwd.join(path).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Where an absolute path really is, as the kernel walks it: component by component, each symlink followed where it
/// stands, so that a `..` after a link climbs from the link's target (`l -> .` makes `l/../x` the root's parent's
/// `x`), never from the link's text. A component that does not exist is kept as written, and a `..` after it pops it,
/// as `create_dir_all` would make it a real directory first. Err on a dangling symlink, which a create would follow.
fn resolve(path: &Path) -> io::Result<PathBuf> {
    let mut resolved = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                resolved.push(name);
                // `resolved` holds no link up to its last component, so canonicalizing it follows only that one (and
                // whatever its target chains to).
                if std::fs::symlink_metadata(&resolved).is_ok_and(|m| m.file_type().is_symlink()) {
                    resolved = std::fs::canonicalize(&resolved)?;
                }
            }
            root => resolved.push(root),
        }
    }
    Ok(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_paths_apply_dots_to_the_text() {
        assert_eq!(lexical(Path::new("/r/a"), Path::new("../b/./c")), PathBuf::from("/r/b/c"));
        assert_eq!(lexical(Path::new("/r"), Path::new("/x/../y")), PathBuf::from("/y"));
    }

    #[test]
    fn missing_tails_resolve_below_their_existing_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        assert_eq!(resolve(&real.join("a/b")).unwrap(), real.join("a/b"));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(real.join("nowhere"), real.join("dangling")).unwrap();
            assert!(resolve(&real.join("dangling")).is_err(), "a dangling link is followed by a create");
        }
    }

    /// `resolve` walks as the kernel does (path_resolution(7)): each link where it stands, `..` from its target.
    #[cfg(unix)]
    #[test]
    fn paths_resolve_as_the_kernel_walks_them() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(real.join("repo/a/b")).unwrap();
        std::fs::write(real.join("repo/file"), "").unwrap();
        symlink(".", real.join("repo/here")).unwrap();
        symlink("a/b", real.join("repo/deep")).unwrap();
        symlink("deep", real.join("repo/chain")).unwrap();
        symlink("file", real.join("repo/to-file")).unwrap();
        let r = |p: &str| resolve(&real.join(p)).unwrap();
        for (path, kernel) in [
            // `..` after a link to the directory itself climbs from the directory: out of repo/.
            ("repo/here/../x", "x"),
            // A relative target is read from the link's directory; `..` climbs from where it led.
            ("repo/deep/..", "repo/a"),
            // A chain of links is followed to its end.
            ("repo/chain/../..", "repo"),
            // A missing component is kept; a `..` after it pops it (create_dir_all makes it a directory first).
            ("repo/missing/../a", "repo/a"),
            ("repo/here/missing/../../y", "y"),
        ] {
            assert_eq!(r(path), real.join(kernel), "{path}");
        }
        assert_eq!(resolve(Path::new("/../..")).unwrap(), PathBuf::from("/"), "`..` at / stays at /");
        // Through a link to a file, nothing below it exists; it resolves to the file's own path with the rest.
        assert_eq!(r("repo/to-file/x"), real.join("repo/file/x"));
    }

    #[test]
    fn git_directories_are_found_at_any_depth_and_in_any_case() {
        for rel in [".git", ".git/config", "tools/.git/config", "vendor/.GIT", "a/.Git/hooks"] {
            assert!(in_a_git_dir(Path::new(rel)), "{rel}");
        }
        for rel in ["", "profiles/x.kdl", ".github/workflows", "a.git/x", "git/config", ".gitignore"] {
            assert!(!in_a_git_dir(Path::new(rel)), "{rel}");
        }
    }

    #[test]
    fn the_root_is_the_git_work_tree_else_the_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
        std::fs::create_dir_all(dir.path().join("repo/a/b")).unwrap();
        assert_eq!(find_root(&dir.path().join("repo/a/b"), None), dir.path().join("repo"));
        assert_eq!(find_root(&dir.path().join("repo/a"), Some(Path::new("b"))), dir.path().join("repo/a/b"));
        assert_eq!(find_root(dir.path(), None), dir.path());
    }
}
