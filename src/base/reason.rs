//! The stable, machine-readable reasons every error carries and their classes: a leaf
//! that every layer may name (the errors that carry them live with their layers).

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

/// Declares [`Reason`]: each variant once, with its snake_case name and its class.
macro_rules! reasons {
    ($($(#[$doc:meta])* $variant:ident = $name:literal => $class:ident,)+) => {
        /// Every stable, machine-readable reason an error can carry: its name (snake_case,
        /// in every error document) and its class are declared once, here.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Reason {
            $($(#[$doc])* $variant,)+
        }

        impl Reason {
            /// Every reason.
            pub const ALL: &[Reason] = &[$(Reason::$variant,)+];

            /// Its name (snake_case).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Reason::$variant => $name,)+
                }
            }

            /// Its class: the HTTP status, the CLI exit code, whether a retry can succeed.
            pub const fn class(self) -> ErrorClass {
                match self {
                    $(Reason::$variant => ErrorClass::$class,)+
                }
            }

            /// The reason of a name.
            pub fn parse(name: &str) -> Option<Self> {
                match name {
                    $($name => Some(Reason::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

reasons! {
    /// A named record does not exist.
    NotFound = "not_found" => NotFound,
    /// The data directory does not exist.
    DataDirMissing = "data_dir_missing" => NotFound,
    /// The data directory holds no memory yet.
    NotInitialized = "not_initialized" => NotFound,
    /// The project holds nothing (or is outside the token's scope).
    UnknownProject = "unknown_project" => NotFound,
    /// No such event in the project.
    UnknownEvent = "unknown_event" => NotFound,
    /// No such operation.
    UnknownOperation = "unknown_operation" => NotFound,
    /// No such MCP tool.
    UnknownTool = "unknown_tool" => NotFound,
    /// No such belief in the project.
    UnknownBelief = "unknown_belief" => NotFound,
    /// No such prospective item in the project.
    UnknownItem = "unknown_item" => NotFound,
    /// An evidence event does not exist in the project.
    UnknownEvidence = "unknown_evidence" => NotFound,
    /// The write conflicts with a stored record.
    Conflict = "conflict" => Conflict,
    /// The expected version is not the current one.
    VersionConflict = "version_conflict" => Conflict,
    /// An idempotency key names another plan.
    DuplicateIdempotencyKey = "duplicate_idempotency_key" => Conflict,
    /// A vector id is stored already.
    DuplicateId = "duplicate_id" => Conflict,
    /// The record's status does not allow the operation.
    InvalidTransition = "invalid_transition" => Conflict,
    /// Read in plan audits of older versions only.
    ProjectBoundaryViolation = "project_boundary_violation" => Conflict,
    /// The episode is sealed.
    EpisodeSealed = "episode_sealed" => Conflict,
    /// The event is in an episode already.
    AlreadyInEpisode = "already_in_episode" => Conflict,
    /// The key has no active belief.
    NoActiveBelief = "no_active_belief" => Conflict,
    /// A user-owned belief needs user evidence.
    UserOwnershipRequiresUserEvidence = "user_ownership_requires_user_evidence" => Conflict,
    /// The event confirmed another item.
    EventAlreadyUsed = "event_already_used" => Conflict,
    /// An imported turn is stored with other text.
    ChangedTurn = "changed_turn" => Conflict,
    /// The memory was opened as a view.
    ReadOnly = "read_only" => Conflict,
    /// The memory was closed by its owner (Python's `Memory.close`).
    Closed = "closed" => Conflict,
    /// The schema needs migrations.
    NeedsMigration = "needs_migration" => Conflict,
    /// The schema is newer than this build.
    SchemaTooNew = "schema_too_new" => Conflict,
    /// The input exceeds a limit.
    PayloadTooLarge = "payload_too_large" => TooLarge,
    /// A vector tier is full.
    TierFull = "tier_full" => TooLarge,
    /// A query longer than a recall reads (the memory's `MAX_QUERY_CHARS` characters or
    /// `MAX_QUERY_TERMS` distinct words), refused whole rather than cut.
    QueryTooLong = "query_too_long" => TooLarge,
    /// A batch of observations the server cannot finish within the request's deadline at
    /// the rate it measured: refused before any work; split it.
    BatchExceedsDeadline = "batch_exceeds_deadline" => TooLarge,
    /// No token, or an unknown one.
    Unauthorized = "unauthorized" => Unauthorized,
    /// A whole-memory verb with a token scoped to projects.
    ProjectForbidden = "project_forbidden" => Forbidden,
    /// A write with a read-only token.
    ReadOnlyToken = "read_only_token" => Forbidden,
    /// The route does not take this method.
    MethodNotAllowed = "method_not_allowed" => MethodNotAllowed,
    /// A service is unreachable.
    Unavailable = "unavailable" => Unavailable,
    /// Another process holds the store.
    StoreLocked = "store_locked" => Unavailable,
    /// Another writer holds the ledger.
    LedgerBusy = "ledger_busy" => Unavailable,
    /// The operation did not finish in time.
    Timeout = "timeout" => Unavailable,
    /// A read asked to see a sequence this node's ledger has not reached within its wait.
    NotCaughtUp = "not_caught_up" => Unavailable,
    /// An internal step failed.
    Internal = "internal" => Internal,
    /// A file or socket failed.
    IoError = "io_error" => Internal,
    /// Stored data is damaged.
    Corruption = "corruption" => Internal,
    /// The disk is full.
    DiskFull = "disk_full" => Internal,
    /// The semantic model failed.
    ModelError = "model_error" => Internal,
    /// Events were stored but their projections failed.
    PartiallyCommitted = "partially_committed" => Internal,
    /// A service refused this process's credentials.
    ServiceAuth = "service_auth" => Internal,
    /// A value is invalid.
    InvalidArgument = "invalid_argument" => InvalidInput,
    /// A request does not fit its operation.
    InvalidRequest = "invalid_request" => InvalidInput,
    /// A body or file is not the JSON expected.
    InvalidJson = "invalid_json" => InvalidInput,
    /// The profile is invalid.
    InvalidProfile = "invalid_profile" => InvalidInput,
    /// The profile needs a cargo feature this build lacks.
    ProfileNotBuilt = "profile_not_built" => InvalidInput,
    /// A vector or embedding has another dimension.
    DimensionMismatch = "dimension_mismatch" => InvalidInput,
    /// A project name is invalid.
    InvalidProject = "invalid_project" => InvalidInput,
    /// The kernel asked for does not run on this CPU.
    UnavailableKernel = "unavailable_kernel" => InvalidInput,
    /// A non-loopback address without tokens.
    InsecureListen = "insecure_listen" => InvalidInput,
    /// An erasure without confirmation.
    ConfirmationRequired = "confirmation_required" => InvalidInput,
    /// The data directory is a file.
    NotADirectory = "not_a_directory" => InvalidInput,
    /// A plan file does not parse.
    InvalidPlan = "invalid_plan" => InvalidInput,
    /// An operation that needs evidence has none.
    MissingEvidence = "missing_evidence" => InvalidInput,
    /// An operation's value is invalid.
    InvalidValue = "invalid_value" => InvalidInput,
    /// The confirming event is not a user event.
    NotUserEvent = "not_user_event" => InvalidInput,
    /// An item cannot confirm itself.
    ConfirmedBySourceEvent = "confirmed_by_source_event" => InvalidInput,
    /// The confirming event is older than the item.
    EarlierThanSourceEvent = "earlier_than_source_event" => InvalidInput,
    /// The confirming event does not affirm.
    NotAffirmative = "not_affirmative" => InvalidInput,
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Reason {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Reason {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Reason::parse(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown reason `{name}`")))
    }
}

impl PartialEq<&str> for Reason {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<str> for Reason {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

#[cfg(test)]
mod tests {
    use super::{ErrorClass, Reason};

    #[test]
    fn every_reason_has_one_name_that_parses_back_and_one_class() {
        let mut names = std::collections::HashSet::new();
        for &r in Reason::ALL {
            assert!(names.insert(r.as_str()), "{r} named twice");
            assert_eq!(Reason::parse(r.as_str()), Some(r));
            assert!(
                r.as_str()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_')
            );
            assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
            let _: ErrorClass = r.class();
        }
        assert_eq!(Reason::parse("no_such_reason"), None);
        assert_eq!(Reason::StoreLocked.class(), ErrorClass::Unavailable);
        assert!(Reason::StoreLocked.class().retryable());
        assert!(!Reason::PartiallyCommitted.class().retryable());
    }
}
