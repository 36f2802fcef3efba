//! Errors of the ledger and the governance layer.

use std::path::PathBuf;

use super::EventId;

/// Everything the ledger can report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// SQLite failed (I/O, lock timeout, constraint).
    #[error("SQLite error{}: {source}", .path.as_ref().map(|p| format!(" on {}", p.display())).unwrap_or_default())]
    Sqlite {
        /// The database file (None for in-memory).
        path: Option<PathBuf>,
        /// The driver error.
        source: rusqlite::Error,
    },
    /// The content of an event exceeds the configured limit; nothing was written.
    #[error(
        "event content is {size} bytes, more than the limit of {limit} bytes (nothing was written)"
    )]
    ContentTooLarge {
        /// Size of the refused content.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// A referenced event does not exist.
    #[error("unknown event {0}")]
    UnknownEvent(EventId),
    /// A reference crosses projects.
    #[error("event {event} belongs to another project than `{project}`")]
    CrossProject {
        /// The referenced event.
        event: EventId,
        /// The project of the operation.
        project: String,
    },
    /// A value is invalid (bad enum name, empty project, ...).
    #[error("invalid {what}: {reason}")]
    Invalid {
        /// What was invalid.
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// A hypervector operation failed (empty bundle, wrong dimension).
    #[error(transparent)]
    Hdv(#[from] hdv::Error),
    /// The database was written by a newer version of hypermem.
    #[error("database schema version {found} is newer than this build supports ({supported})")]
    SchemaTooNew {
        /// Version in the file.
        found: u32,
        /// Highest version this build knows.
        supported: u32,
    },
    /// The database needs migrations that have not been applied.
    #[error("database schema is at version {found}, this build needs {needed}: run migrate")]
    NeedsMigration {
        /// Version in the file.
        found: u32,
        /// Version this build needs.
        needed: u32,
    },
}

/// Result alias of the ledger.
pub type LedgerResult<T> = std::result::Result<T, LedgerError>;
