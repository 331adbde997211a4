//! The one-writer lock of out/ ([`gpuplan::emit::lock`]) that `compile`, `commit` and `catalog refresh` hold.

use std::path::Path;

use gpuplan::emit;

use super::{CliError, LOCK_TIMEOUT};

/// The one-writer lock of `out` (see `emit::lock`), saying what a killed writer left and this one cleaned up.
pub fn writer_lock(out: &Path) -> Result<emit::lock::WriterLock, CliError> {
    let timeout = emit::lock::timeout(LOCK_TIMEOUT.get().copied().flatten()).map_err(CliError::msg)?;
    let lock = emit::lock::acquire(out, timeout, |message| super::inform(message)).map_err(CliError::msg)?;
    if let Some(backup) = &lock.stale.restored {
        super::inform(format!("restored {} from {} (an interrupted gpuplan left it there)", out.display(), backup.display()));
    }
    for dir in &lock.stale.removed {
        super::inform(format!("removed {} (left by an interrupted gpuplan)", dir.display()));
    }
    Ok(lock)
}
