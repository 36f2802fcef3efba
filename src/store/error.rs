//! Errors of the vector store.

use std::path::PathBuf;

use crate::base::{InvalidProject, ProjectId, VectorId};

/// Everything the vector tiers can report.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// An I/O call failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A file is damaged: bad magic, bad checksum, truncated committed data.
    #[error("corrupted store file {path}: {reason}")]
    Corruption {
        /// The damaged file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A vector (or a stored file) has another dimension than the store.
    #[error("dimension mismatch{}: expected {expected} bits, found {found} bits", .path.as_ref().map(|p| format!(" in {}", p.display())).unwrap_or_default())]
    DimensionMismatch {
        /// The file, when the mismatch is with stored data.
        path: Option<PathBuf>,
        /// The store's dimension.
        expected: usize,
        /// The offending dimension.
        found: usize,
    },
    /// The id is already stored in this project.
    #[error("vector {id} already exists in project `{project}`")]
    DuplicateId {
        /// The project.
        project: ProjectId,
        /// The id.
        id: VectorId,
    },
    /// A project name is not usable.
    #[error("invalid project name {name:?}: {reason}")]
    InvalidProject {
        /// The rejected name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// The tier is full and cannot take the vector.
    #[error("{tier} tier is full ({capacity} vectors)")]
    Full {
        /// Which tier.
        tier: &'static str,
        /// Its capacity.
        capacity: usize,
    },
    /// A write was attempted on a store opened read-only with `view`.
    #[error("store {path} is open read-only (view)")]
    ReadOnly {
        /// The store root.
        path: PathBuf,
    },
    /// Another process holds the store.
    #[error("store {path} is locked by another process")]
    Locked {
        /// The store root.
        path: PathBuf,
    },
    /// A service the tier depends on (Redis) cannot be reached or did not answer in time,
    /// after the profile's retries; retryable. The URL has its password masked.
    #[error("{service} at {url} is unavailable: {reason}")]
    Unavailable {
        /// Which service (`redis`).
        service: &'static str,
        /// Its URL (password masked).
        url: String,
        /// What failed.
        reason: String,
    },
    /// A service answered something hypermem did not write there (a foreign key, a vector
    /// of the wrong size): the deployment's keys are shared with something else.
    #[error("{service} at {url} holds unexpected data under `{key}`: {reason}")]
    Foreign {
        /// Which service (`redis`).
        service: &'static str,
        /// Its URL (password masked).
        url: String,
        /// The key.
        key: String,
        /// What was wrong.
        reason: String,
    },
    /// A service refused this process's credentials (missing, wrong or without the
    /// rights): the message names the setting or variable that holds them.
    #[error("{service} at {url} refused the credentials: {reason} (they come from {setting})")]
    Auth {
        /// Which service (`qdrant`).
        service: &'static str,
        /// Its URL (password masked).
        url: String,
        /// Where the credentials come from (an environment variable, the URL).
        setting: String,
        /// What the service said.
        reason: String,
    },
    /// A hypervector operation failed.
    #[error(transparent)]
    Hdv(#[from] hdv::Error),
}

/// Result alias of the store.
pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// Attaches the path to an I/O error.
pub(crate) trait IoContext<T> {
    fn at(self, path: &std::path::Path) -> StoreResult<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: &std::path::Path) -> StoreResult<T> {
        self.map_err(|source| StoreError::Io {
            path: path.to_owned(),
            source,
        })
    }
}

impl From<InvalidProject> for StoreError {
    fn from(InvalidProject { name, reason }: InvalidProject) -> Self {
        StoreError::InvalidProject { name, reason }
    }
}
