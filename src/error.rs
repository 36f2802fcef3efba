//! The umbrella error of the engine: every subsystem's error converts into it, and each
//! maps to one [`Reason`] (declared in [`crate::base`], where every layer can name it).

use crate::config::ConfigError;
use crate::index::HnswError;
use crate::ledger::LedgerError;
use crate::store::StoreError;

use crate::base::{ErrorClass, InvalidProject, Reason};

/// Any error of the engine.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Profile loading or validation.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Vector tiers.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Ledger, governance and cognition (SQLite).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// HNSW index.
    #[error(transparent)]
    Hnsw(#[from] HnswError),
    /// Hypervector algebra.
    #[error(transparent)]
    Hdv(#[from] hdv::Error),
    /// The profile's semantic model.
    #[error(transparent)]
    Model(#[from] crate::semantic::ModelError),
    /// A read asked to see at least sequence `asked` (the id a write returned), and the
    /// ledger this node reads had reached only `seen` when the wait ran out: retry, or
    /// read where the write was made.
    #[error(
        "this node's ledger has reached sequence {seen}, not the {asked} the read asked to see, after waiting {waited_ms} ms; retry"
    )]
    NotCaughtUp {
        /// The sequence the read asked for.
        asked: u64,
        /// The ledger's sequence when the wait ran out.
        seen: u64,
        /// How long the read waited.
        waited_ms: u64,
    },
    /// Observed events were committed to the ledger, but a projection after the commit
    /// (vectors, synapses, episodes) failed and the events carry no source ids, so
    /// resending them would store them twice: the events are stored (found by their words
    /// now, repaired in full on the next open), and the error says so instead of inviting
    /// a retry.
    #[error("events {} are stored, but after the commit {source}; do not resend them (give each observation a source id to make a resend safe)", .events.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))]
    Committed {
        /// The stored events.
        events: Vec<crate::ledger::EventId>,
        /// What failed after the commit.
        source: Box<Error>,
    },
}

impl From<InvalidProject> for Error {
    fn from(e: InvalidProject) -> Self {
        Error::Store(e.into())
    }
}

/// Result alias of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The stable, machine-readable reason (snake_case) of the error.
    pub fn reason(&self) -> Reason {
        match self {
            Error::Config(e) => match e {
                ConfigError::Io { .. } => Reason::InvalidArgument,
                ConfigError::NotBuilt { .. } => Reason::ProfileNotBuilt,
                _ => Reason::InvalidProfile,
            },
            Error::Store(e) => match e {
                StoreError::Io { .. } => Reason::IoError,
                StoreError::Corruption { .. } => Reason::Corruption,
                StoreError::DimensionMismatch { .. } => Reason::DimensionMismatch,
                StoreError::DuplicateId { .. } => Reason::DuplicateId,
                StoreError::InvalidProject { .. } => Reason::InvalidProject,
                StoreError::Full { .. } => Reason::TierFull,
                StoreError::ReadOnly { .. } => Reason::ReadOnly,
                StoreError::Locked { .. } => Reason::StoreLocked,
                StoreError::Unavailable { .. } => Reason::Unavailable,
                StoreError::Foreign { .. } => Reason::Corruption,
                StoreError::Auth { .. } => Reason::ServiceAuth,
                StoreError::Hdv(e) => hdv_reason(e),
            },
            Error::Ledger(e) => match e {
                LedgerError::Sqlite { source, .. } => crate::ledger::sqlite_failure(source).0,
                #[cfg(feature = "postgres")]
                LedgerError::Postgres { source } => {
                    crate::ledger::postgres::postgres_failure(source).0
                }
                LedgerError::ContentTooLarge { .. } => Reason::PayloadTooLarge,
                LedgerError::UnknownEvent(_) => Reason::UnknownEvent,
                LedgerError::UnknownProject { .. } => Reason::UnknownProject,
                LedgerError::NotFound { .. } => Reason::NotFound,
                LedgerError::Refused { reason, .. } => *reason,
                LedgerError::Invalid { .. } => Reason::InvalidArgument,
                LedgerError::Corrupt { .. } => Reason::Corruption,
                LedgerError::Hdv(e) => hdv_reason(e),
                LedgerError::SchemaTooNew { .. } => Reason::SchemaTooNew,
                LedgerError::NeedsMigration { .. } => Reason::NeedsMigration,
            },
            Error::Hnsw(e) => match e {
                HnswError::Persist { .. } => Reason::Corruption,
                HnswError::DimensionMismatch { .. } => Reason::DimensionMismatch,
                HnswError::Config(_) => Reason::InvalidArgument,
                HnswError::Hdv(e) => hdv_reason(e),
            },
            Error::Hdv(e) => hdv_reason(e),
            Error::Model(_) => Reason::ModelError,
            Error::Committed { .. } => Reason::PartiallyCommitted,
            Error::NotCaughtUp { .. } => Reason::NotCaughtUp,
        }
    }

    /// The class of the error (exit code, HTTP status).
    pub fn class(&self) -> ErrorClass {
        self.reason().class()
    }
}

fn hdv_reason(e: &hdv::Error) -> Reason {
    match e {
        hdv::Error::UnavailableKernel { .. } => Reason::UnavailableKernel,
        hdv::Error::DimensionMismatch { .. } | hdv::Error::EmbeddingLength { .. } => {
            Reason::DimensionMismatch
        }
        hdv::Error::ZeroDimension
        | hdv::Error::DimensionNotMultipleOf64 { .. }
        | hdv::Error::InvalidParameter { .. } => Reason::InvalidArgument,
        // Words that are not a whole number of vectors come from stored bytes.
        hdv::Error::RaggedBlock { .. } => Reason::Corruption,
        hdv::Error::EmptyBundle => Reason::Internal,
        // `hdv::Error` is non-exhaustive: a variant this build does not know is ours.
        _ => Reason::Internal,
    }
}
