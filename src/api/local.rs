//! How a local process (the command line) opens a data directory: a read opens a view
//! (no lock, nothing written), a write opens the store, and a running `hypermem serve`
//! announces itself in the directory so a writer is refused at once, naming it, instead of
//! waiting for its lock.

use std::path::Path;

use super::ApiError;
use crate::{Memory, Profile, Reason};

/// The file in a data directory where `hypermem serve` announces its URL while it holds
/// the store: a CLI write then refuses at once, naming the server, instead of waiting for
/// the lock.
pub const SERVING: &str = "SERVING";

/// The data directory must exist and be a directory, unless the verb may create it.
///
/// # Errors
/// `not_a_directory`, `data_dir_missing` (naming `hypermem init`), `io_error`.
pub fn check_data_dir(dir: &Path, may_create: bool) -> Result<(), ApiError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(ApiError::new(
            Reason::NotADirectory,
            format!("data directory {} is not a directory", dir.display()),
        )),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if may_create {
                Ok(())
            } else {
                Err(ApiError::new(
                    Reason::DataDirMissing,
                    format!(
                        "data directory {} does not exist: run `hypermem init` (or pass --create)",
                        dir.display()
                    ),
                ))
            }
        }
        Err(e) => Err(ApiError::new(
            Reason::IoError,
            format!("data directory {}: {e}", dir.display()),
        )),
    }
}

/// `serve` announces itself as the writer of `dir` at `url` (see [`SERVING`]).
pub fn announce(dir: &Path, url: &str) {
    if let Err(e) = std::fs::write(dir.join(SERVING), format!("{url}\n")) {
        tracing::warn!(error = %e, "could not announce the server in the data directory");
    }
}

/// `serve` withdraws its announcement when it stops.
pub fn withdraw(dir: &Path) {
    let _ = std::fs::remove_file(dir.join(SERVING));
}

/// The memory a verb works on: a view for a read (no lock, so it never waits for another
/// process, and it writes nothing: no repair, no migration, no query log; repairs are a
/// writer's, on open), else the store itself, refused at once when a running `serve`
/// holds it.
///
/// # Errors
/// `not_initialized` for a read of a directory without a store (unless `create`), a
/// store another process holds (`store_locked`, naming a running server), the memory's
/// errors on open.
pub fn open(profile: &Profile, dir: &Path, reads: bool, create: bool) -> Result<Memory, ApiError> {
    // A read on a directory that holds no store creates none: it is refused.
    if reads && !create && !dir.join("ledger.db").exists() {
        return Err(ApiError::new(
            Reason::NotInitialized,
            format!(
                "data directory {} holds no memory yet: `hypermem init` creates one (or any write, with --create); a read creates nothing",
                dir.display()
            ),
        ));
    }
    if reads && dir.join("ledger.db").exists() {
        return Ok(Memory::open_view(profile, Some(dir))?);
    }
    let Ok(url) = std::fs::read_to_string(dir.join(SERVING)) else {
        return Ok(Memory::open(profile, Some(dir))?);
    };
    // A server announced itself as this store's writer: no use waiting for its lock.
    let mut now = profile.clone();
    now.store.lock_wait_ms = 0;
    match Memory::open(&now, Some(dir)) {
        Err(e) if e.reason() == Reason::StoreLocked => {
            let url = url.trim();
            Err(ApiError::new(
                Reason::StoreLocked,
                format!(
                    "`hypermem serve` at {url} holds {}: send writes to it (`POST {url}/v1/projects/<project>/<op>`) or stop it first; reads work beside it",
                    dir.display()
                ),
            ))
        }
        // The server is gone (its announcement outlived it): the store is ours.
        other => {
            let _ = std::fs::remove_file(dir.join(SERVING));
            Ok(other?)
        }
    }
}
