//! Errors of the ledger and the governance layer.

use std::path::PathBuf;

use super::EventId;

/// Everything the ledger can report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// SQLite failed (I/O, lock timeout, constraint). The message names the failure in
    /// hypermem's words ([`sqlite_failure`]); the driver's own text stays in `source`.
    #[error("ledger{}: {}", .path.as_ref().map(|p| format!(" {}", p.display())).unwrap_or_default(), sqlite_failure(source).1)]
    Sqlite {
        /// The database file (None for in-memory).
        path: Option<PathBuf>,
        /// The driver error.
        source: rusqlite::Error,
    },
    /// PostgreSQL failed (connection, conflict, refusal). The message names the failure in
    /// hypermem's words ([`super::postgres::postgres_failure`]); the driver's own text
    /// stays in `source`.
    #[cfg(feature = "postgres")]
    #[error("ledger (PostgreSQL): {}", super::postgres::postgres_failure(source).1)]
    Postgres {
        /// The driver error.
        source: postgres::Error,
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
    /// A referenced event does not exist in the project (an event of another project is
    /// answered alike: ids of one project tell nothing of another).
    #[error("unknown event {0}")]
    UnknownEvent(EventId),
    /// The project holds nothing in this memory (never written, or erased). The message
    /// names no other project: a caller learns nothing of projects it did not name.
    #[error("unknown project `{project}`: this memory holds nothing of it")]
    UnknownProject {
        /// The project asked for.
        project: String,
    },
    /// A referenced record (belief, episode, procedure, prospective item) does not exist.
    #[error("unknown {what} {id}")]
    NotFound {
        /// What kind of record.
        what: &'static str,
        /// Its id.
        id: u64,
    },
    /// A refusal with its own stable reason, e.g. `episode_sealed`.
    #[error("{message}")]
    Refused {
        /// The stable reason.
        reason: crate::base::Reason,
        /// What was refused and why.
        message: String,
    },
    /// Stored bytes do not decode (a damaged vector, counters, procedure steps): the
    /// store's fault, never the caller's input.
    #[error("stored {what} is damaged: {detail}")]
    Corrupt {
        /// What was read.
        what: &'static str,
        /// What is wrong with it, in hypermem's words.
        detail: String,
    },
    /// A value is invalid (bad enum name, empty project, ...). `what` may be a type's
    /// name: it is written in words ("prospective kind").
    #[error("invalid {}: {reason}", in_words(what))]
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

/// A SQLite failure as (stable reason, message in hypermem's words): callers and users see
/// what went wrong without the driver's text.
pub fn sqlite_failure(e: &rusqlite::Error) -> (crate::base::Reason, &'static str) {
    use rusqlite::ErrorCode as C;
    match e.sqlite_error_code() {
        Some(C::DatabaseBusy | C::DatabaseLocked) => (
            crate::base::Reason::LedgerBusy,
            "the ledger is busy (another writer holds it); retry",
        ),
        Some(C::ConstraintViolation) => (
            crate::base::Reason::Conflict,
            "the write conflicts with a stored record (a uniqueness or reference rule); nothing was written",
        ),
        Some(C::DiskFull) => (
            crate::base::Reason::DiskFull,
            "the disk is full; nothing was written",
        ),
        Some(C::DatabaseCorrupt | C::NotADatabase) => (
            crate::base::Reason::Corruption,
            "the ledger file is damaged or is not a hypermem ledger",
        ),
        Some(C::ReadOnly | C::PermissionDenied | C::CannotOpen) => (
            crate::base::Reason::IoError,
            "the ledger file cannot be opened for writing (permissions or a read-only disk)",
        ),
        Some(C::SystemIoFailure) => (
            crate::base::Reason::IoError,
            "the ledger could not be read or written (I/O failure)",
        ),
        _ => (
            crate::base::Reason::Internal,
            "the ledger failed an operation (internal error)",
        ),
    }
}

/// A name written in words: `ProspectiveKind` → "prospective kind"; a name already in words
/// is kept.
fn in_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for (i, c) in name.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_type_name_is_written_in_words() {
        let e = super::LedgerError::Invalid {
            what: "ProspectiveKind",
            reason: "\"bogus\"".into(),
        };
        assert_eq!(e.to_string(), "invalid prospective kind: \"bogus\"");
        assert_eq!(super::in_words("content"), "content");
    }
}
