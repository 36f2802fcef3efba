//! The umbrella error of the engine: every subsystem's error converts into it.

use crate::config::ConfigError;
use crate::index::HnswError;
use crate::ledger::LedgerError;
use crate::store::StoreError;

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

/// Result alias of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What kind of failure an error is: one class per HTTP status family, MCP error and CLI
/// exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// The request is malformed or names something invalid (HTTP 400, exit 2).
    InvalidInput,
    /// A named record or project does not exist (HTTP 404, exit 3).
    NotFound,
    /// The request conflicts with stored state: a version, an idempotency key, a
    /// governance rule (HTTP 409, exit 4).
    Conflict,
    /// The input exceeds a configured limit (HTTP 413, exit 2).
    TooLarge,
    /// A resource is busy or unreachable; retrying can succeed (HTTP 503, exit 5).
    Unavailable,
    /// Stored data is damaged or an internal step failed (HTTP 500, exit 1).
    Internal,
    /// No credentials, or unknown ones (HTTP 401, exit 6).
    Unauthorized,
    /// The credentials do not allow the request: a whole-memory verb with a token scoped
    /// to projects, or a write with a read-only token (HTTP 403, exit 6).
    Forbidden,
    /// The route exists but not with this method (HTTP 405; only over HTTP, exit 2).
    MethodNotAllowed,
}

impl ErrorClass {
    /// The CLI exit code of the class.
    pub const fn exit_code(self) -> u8 {
        match self {
            ErrorClass::Internal => 1,
            ErrorClass::InvalidInput | ErrorClass::TooLarge | ErrorClass::MethodNotAllowed => 2,
            ErrorClass::NotFound => 3,
            ErrorClass::Conflict => 4,
            ErrorClass::Unavailable => 5,
            ErrorClass::Unauthorized | ErrorClass::Forbidden => 6,
        }
    }

    /// The HTTP status of the class.
    pub const fn http_status(self) -> u16 {
        match self {
            ErrorClass::InvalidInput => 400,
            ErrorClass::NotFound => 404,
            ErrorClass::Conflict => 409,
            ErrorClass::TooLarge => 413,
            ErrorClass::Unavailable => 503,
            ErrorClass::Internal => 500,
            ErrorClass::Unauthorized => 401,
            ErrorClass::Forbidden => 403,
            ErrorClass::MethodNotAllowed => 405,
        }
    }

    /// Whether retrying the same request can succeed.
    pub const fn retryable(self) -> bool {
        matches!(self, ErrorClass::Unavailable)
    }
}

/// The class of a stable reason (see [`Error::reason`]).
pub fn class_of(reason: &str) -> ErrorClass {
    match reason {
        "not_found" | "data_dir_missing" | "not_initialized" | "unknown_project"
        | "unknown_event" | "unknown_operation" | "unknown_belief" | "unknown_item"
        | "unknown_episode" | "unknown_procedure" | "unknown_evidence" => ErrorClass::NotFound,
        "conflict"
        | "version_conflict"
        | "duplicate_idempotency_key"
        | "duplicate_id"
        | "invalid_transition"
        | "project_boundary_violation"
        | "episode_project_mismatch"
        | "episode_sealed"
        | "already_in_episode"
        | "no_active_belief"
        | "user_ownership_requires_user_evidence"
        | "event_already_used"
        | "changed_turn"
        | "read_only"
        | "needs_migration"
        | "schema_too_new" => ErrorClass::Conflict,
        "payload_too_large" | "tier_full" => ErrorClass::TooLarge,
        "unauthorized" => ErrorClass::Unauthorized,
        "method_not_allowed" => ErrorClass::MethodNotAllowed,
        "project_forbidden" | "read_only_token" => ErrorClass::Forbidden,
        "unavailable" | "store_locked" | "ledger_busy" | "timeout" => ErrorClass::Unavailable,
        "internal"
        | "io_error"
        | "corruption"
        | "disk_full"
        | "model_error"
        | "partially_committed" => ErrorClass::Internal,
        _ => ErrorClass::InvalidInput,
    }
}

impl Error {
    /// The stable, machine-readable reason (snake_case) of the error.
    pub fn reason(&self) -> &'static str {
        match self {
            Error::Config(e) => match e {
                ConfigError::Io { .. } => "invalid_argument",
                ConfigError::NotBuilt { .. } => "profile_not_built",
                _ => "invalid_profile",
            },
            Error::Store(e) => match e {
                StoreError::Io { .. } => "io_error",
                StoreError::Corruption { .. } => "corruption",
                StoreError::DimensionMismatch { .. } => "dimension_mismatch",
                StoreError::DuplicateId { .. } => "duplicate_id",
                StoreError::InvalidProject { .. } => "invalid_project",
                StoreError::Full { .. } => "tier_full",
                StoreError::ReadOnly { .. } => "read_only",
                StoreError::Locked { .. } => "store_locked",
                StoreError::Unavailable { .. } => "unavailable",
                StoreError::Foreign { .. } => "corruption",
                StoreError::Hdv(e) => hdv_reason(e),
            },
            Error::Ledger(e) => match e {
                LedgerError::Sqlite { source, .. } => crate::ledger::sqlite_failure(source).0,
                LedgerError::ContentTooLarge { .. } => "payload_too_large",
                LedgerError::UnknownEvent(_) => "unknown_event",
                LedgerError::UnknownProject { .. } => "unknown_project",
                LedgerError::NotFound { .. } => "not_found",
                LedgerError::Refused { reason, .. } => reason,
                LedgerError::Invalid { .. } => "invalid_argument",
                LedgerError::Corrupt { .. } => "corruption",
                LedgerError::Hdv(e) => hdv_reason(e),
                LedgerError::SchemaTooNew { .. } => "schema_too_new",
                LedgerError::NeedsMigration { .. } => "needs_migration",
            },
            Error::Hnsw(e) => match e {
                HnswError::Persist { .. } => "corruption",
                HnswError::DimensionMismatch { .. } => "dimension_mismatch",
                HnswError::Config(_) => "invalid_argument",
                _ => "internal",
            },
            Error::Hdv(e) => hdv_reason(e),
            Error::Model(_) => "model_error",
            Error::Committed { .. } => "partially_committed",
        }
    }

    /// The class of the error (exit code, HTTP status).
    pub fn class(&self) -> ErrorClass {
        class_of(self.reason())
    }
}

fn hdv_reason(e: &hdv::Error) -> &'static str {
    match e {
        hdv::Error::UnavailableKernel { .. } => "unavailable_kernel",
        hdv::Error::DimensionMismatch { .. } | hdv::Error::EmbeddingLength { .. } => {
            "dimension_mismatch"
        }
        _ => "invalid_argument",
    }
}
