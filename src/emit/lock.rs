//! One writer at a time: `compile`, `commit` and `catalog refresh` hold an advisory lock on `.gpuplan.lock` in the
//! directory that holds out/ (never inside out/, which is replaced wholesale) while they write.
//!
//! The lock is the standard library's `File::try_lock` (stable since Rust 1.89, this crate needs 1.95): `flock(2)`
//! with `LOCK_EX` on Unix and `LockFileEx` on Windows, the same calls `fs4` and `fd-lock` make, with no dependency
//! to keep current. The OS releases it when the process ends, however it ends ("a lock is released … when all
//! file descriptors referring to it are closed", flock(2)), so a killed writer never leaves a lock behind and
//! the lock file itself is never removed (removing it would let two processes lock two different files).
//!
//! A second writer prints one message, polls, and gives up after the timeout with an error that names the lock
//! and the holder's pid (written into the file by the holder). Readers (`compile --check`, `diff`) take no lock:
//! out/ is swapped in one step ([`crate::emit::swap`]), so they see the old tree or the new one.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::emit::swap::{self, OutPlace, Stale};

/// Name of the lock file, in the directory holding out/.
pub const LOCK_FILE: &str = ".gpuplan.lock";
/// Environment variable with the timeout in seconds (the `--lock-timeout` flag wins over it).
pub const TIMEOUT_ENV: &str = "GPUPLAN_LOCK_TIMEOUT";
/// How long a second writer waits when neither the flag nor the environment says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a waiting writer tries again.
const POLL: Duration = Duration::from_millis(100);

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another gpuplan{} is writing {} and still held {} after {}s; nothing was changed. Wait for it to finish \
         and run this again, or wait longer with --lock-timeout SECONDS (or {TIMEOUT_ENV})",
        holder.as_deref().map(|p| format!(" (pid {p})")).unwrap_or_default(), out_dir.display(), path.display(), waited.as_secs()
    )]
    Timeout { out_dir: PathBuf, path: PathBuf, holder: Option<String>, waited: Duration },
    #[error("cannot lock {}: {source}; nothing was changed", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{TIMEOUT_ENV}={0:?} is not a number of seconds (e.g. {TIMEOUT_ENV}=120)")]
    BadTimeout(String),
}

/// The writer lock, held until dropped.
#[derive(Debug)]
pub struct WriterLock {
    _file: File,
    path: PathBuf,
    /// What the previous, killed writers left and this one cleaned up.
    pub stale: Stale,
}

impl WriterLock {
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for WriterLock {
    /// Clears the pid before the lock goes, so a waiter never names a finished process (only a killed writer's pid
    /// can remain, and the next holder overwrites it).
    fn drop(&mut self) {
        let _ = self._file.set_len(0);
    }
}

/// The lock file of an out/ directory: beside out/ (a symlinked out/ resolved, as the swap resolves it).
pub fn lock_path(out_dir: &Path) -> io::Result<PathBuf> {
    Ok(OutPlace::of(out_dir)?.parent.join(LOCK_FILE))
}

/// The timeout: `flag` if given, else [`TIMEOUT_ENV`], else [`DEFAULT_TIMEOUT`].
pub fn timeout(flag: Option<u64>) -> Result<Duration, LockError> {
    if let Some(secs) = flag {
        return Ok(Duration::from_secs(secs));
    }
    match std::env::var(TIMEOUT_ENV) {
        Ok(v) if !v.trim().is_empty() => {
            v.trim().parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).and_then(|s| Duration::try_from_secs_f64(s).ok()).ok_or(LockError::BadTimeout(v))
        }
        _ => Ok(DEFAULT_TIMEOUT),
    }
}

/// Takes the writer lock of `out_dir`, waiting up to `timeout` (calling `waiting` once with a message when it has
/// to wait), then removes what killed writers left beside out/ ([`swap::remove_stale`]).
pub fn acquire(out_dir: &Path, timeout: Duration, waiting: impl FnOnce(&str)) -> Result<WriterLock, LockError> {
    let io_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| LockError::Io { path, source }
    };
    let path = lock_path(out_dir).map_err(io_error(out_dir))?;
    // The lock's place is out/'s, beside it: allowed when out/ is (inside the repository, or typed on the command
    // line with the lock beside it), and checked before anything is created there (`out "l/../new/out"` with
    // `l -> .` would otherwise make `new/` beside the repository first).
    crate::confine::check_replace(out_dir).map_err(io_error(out_dir))?;
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io_error(parent))?;
    }
    // A link in the lock's place (a pull request can commit one) is named as the confinement names links; one that
    // stays inside still fails the open below, which never follows a link.
    if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
        crate::confine::check_write(&path).map_err(io_error(&path))?;
    }
    // Never truncated on open: the holder's pid stays readable for the message. Never through a link either: a
    // `.gpuplan.lock` symlink (a pull request can commit one) would have the pid written where it points.
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(target_os = "linux")]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    let mut file = options.open(&path).map_err(io_error(&path))?;
    let started = Instant::now();
    let mut waiting = Some(waiting);
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) => {
                let holder = holder_pid(&mut file);
                if started.elapsed() >= timeout {
                    return Err(LockError::Timeout { out_dir: out_dir.to_path_buf(), path, holder, waited: timeout });
                }
                if let Some(say) = waiting.take() {
                    say(&format!(
                        "waiting for another gpuplan{} writing {} (lock {}), up to {}s",
                        holder.map(|p| format!(" (pid {p})")).unwrap_or_default(),
                        out_dir.display(),
                        path.display(),
                        timeout.as_secs()
                    ));
                }
                std::thread::sleep(POLL.min(timeout.saturating_sub(started.elapsed())).max(Duration::from_millis(1)));
            }
            Err(TryLockError::Error(e)) => return Err(io_error(&path)(e)),
        }
    }
    record_pid(&mut file).map_err(io_error(&path))?;
    let stale = swap::remove_stale(out_dir).map_err(io_error(out_dir))?;
    Ok(WriterLock { _file: file, path, stale })
}

fn holder_pid(file: &mut File) -> Option<String> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    let pid = text.trim();
    (!pid.is_empty() && pid.chars().all(|c| c.is_ascii_digit())).then(|| pid.to_string())
}

fn record_pid(file: &mut File) -> io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{}", std::process::id())
}
