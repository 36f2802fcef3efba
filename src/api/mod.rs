//! The operation layer: one owned, serde request type per operation of [`Memory`], one way
//! to execute it, and one error type with a stable reason. The CLI (`hypermem`), the HTTP
//! server (`hypermem serve`) and the MCP server (`hypermem mcp`) only translate their
//! transport into a [`Request`] and its result or [`ApiError`] back: each operation,
//! its defaults (idempotency keys derived from the operation, time arguments through
//! [`crate::clock::parse_instant`]) and its refusals are written once, here.
//!
//! A request is a JSON object tagged by `op` (`{"op": "recall", "project": "acme",
//! "query": "editor theme"}`); unknown fields are refused. Results are the engine's own
//! serializable types (`RecallResult`, `Pack`, `Belief`, ...), returned as JSON values.

pub mod catalog;
pub mod http;
pub mod local;
pub mod mcp;
mod response;
pub mod text;

pub use catalog::{Request, Response};
pub use response::{
    AuditLine, ConceptShown, EpisodeAppended, EpisodeEnded, EpisodeStarted, Initialized, Listening,
    MemoryShown, Migrated, Observed, ObservedBatch, ProcedureAdded, ProspectiveShown,
};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::base::ProjectId;
use crate::cognition::{EpisodeId, ProcedureId, Step};
use crate::governance::{
    BeliefId, BeliefStatus, Op, Ownership, Plan, PlanOutcome, ProspectiveId, ProspectiveKind,
    ProspectiveRefusal,
};
use crate::ledger::{EventId, EventKind, LedgerError, NewEvent, Role};
use crate::{ErrorClass, Memory};

/// A failed operation: a stable snake_case `reason`, a message naming what was wrong, its
/// class (HTTP status, MCP error, CLI exit code) and, for governance and prospective
/// refusals, the structured refusal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApiError {
    /// The stable reason (`unknown_project`, `version_conflict`, `invalid_argument`, ...).
    pub reason: crate::base::Reason,
    /// What was wrong, in words.
    pub message: String,
    /// The class: one HTTP status, one exit code.
    #[serde(skip)]
    pub class: ErrorClass,
    /// The refusal's own fields (a rejected plan's operation index and reason fields).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<Value>,
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}] {}", self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

impl ApiError {
    /// An error with `reason` (its class follows from it, [`crate::base::Reason::class`]).
    pub fn new(reason: crate::base::Reason, message: impl Into<String>) -> Self {
        Self {
            reason,
            message: message.into(),
            class: reason.class(),
            detail: None,
        }
    }

    /// `invalid_argument`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(crate::base::Reason::InvalidArgument, message)
    }

    /// `{"error": {"reason", "message", "detail"?, "retryable"?}}`: the one error document of
    /// every transport.
    pub fn to_json(&self) -> Value {
        let mut error = json!({"reason": self.reason, "message": self.message});
        if let Some(d) = &self.detail {
            error["detail"] = d.clone();
        }
        if self.class.retryable() {
            error["retryable"] = json!(true);
        }
        json!({ "error": error })
    }

    /// A refusal with its structured fields (`{"reason": ..., ...}`: governance,
    /// prospective) as `detail`.
    fn refusal(reason: crate::base::Reason, detail: Value, message: String) -> Self {
        let mut e = Self::new(reason, message);
        e.detail = Some(detail);
        e
    }
}

impl From<crate::Error> for ApiError {
    fn from(e: crate::Error) -> Self {
        if let crate::Error::Ledger(LedgerError::Sqlite { source, .. }) = &e {
            tracing::debug!(error = %source, "SQLite failure");
        }
        let mut error = Self::new(e.reason(), e.to_string());
        if let crate::Error::Committed { events, .. } = &e {
            error.detail = Some(json!({ "event_ids": events }));
        }
        error
    }
}

macro_rules! via_engine_error {
    ($($t:ty),*) => {$(
        impl From<$t> for ApiError {
            fn from(e: $t) -> Self {
                crate::Error::from(e).into()
            }
        }
    )*};
}
via_engine_error!(
    LedgerError,
    crate::store::StoreError,
    crate::ConfigError,
    crate::hdv::Error
);

impl From<&clap::Error> for ApiError {
    /// A command line that does not parse: `invalid_argument` with clap's first paragraph
    /// (the problem and, on its next lines, what it names: the missing arguments, the
    /// possible values).
    fn from(e: &clap::Error) -> Self {
        let detail = e.to_string();
        let message = detail
            .lines()
            .take_while(|l| !l.trim().is_empty())
            .map(str::trim)
            .collect::<Vec<_>>()
            .join(" ");
        let message = message.trim_start_matches("error: ");
        Self::invalid(if message.is_empty() {
            e.kind().to_string()
        } else {
            message.to_owned()
        })
    }
}

impl From<serde_json::Error> for ApiError {
    fn from(e: serde_json::Error) -> Self {
        Self::new(
            crate::base::Reason::Internal,
            format!("cannot serialize the response: {e}"),
        )
    }
}

impl From<std::io::Error> for ApiError {
    fn from(e: std::io::Error) -> Self {
        Self::new(crate::base::Reason::IoError, format!("I/O error: {e}"))
    }
}

impl From<ProspectiveRefusal> for ApiError {
    fn from(r: ProspectiveRefusal) -> Self {
        let message = format!("refused: {r}");
        Self::refusal(
            r.reason(),
            serde_json::to_value(&r).unwrap_or(Value::Null),
            message,
        )
    }
}

/// Result of an operation.
pub type ApiResult<T> = Result<T, ApiError>;

pub use crate::base::Time;

impl Time {
    /// The instant in ms, or `invalid_argument` naming `field`.
    ///
    /// # Errors
    /// `invalid_argument`.
    pub fn ms(&self, field: &str) -> ApiResult<i64> {
        let ms = match self {
            Time::Ms(ms) => *ms,
            Time::Text(t) => crate::clock::parse_instant(t)
                .map_err(|e| ApiError::invalid(format!("{field}: {e}")))?,
        };
        if !crate::base::TIME_RANGE_MS.contains(&ms) {
            return Err(ApiError::invalid(format!(
                "{field}: {} is not a time between the years 0000 and 9999 (epoch milliseconds {} to {})",
                match self {
                    Time::Ms(ms) => ms.to_string(),
                    Time::Text(t) => format!("`{t}`"),
                },
                crate::base::TIME_RANGE_MS.start(),
                crate::base::TIME_RANGE_MS.end()
            )));
        }
        Ok(ms)
    }
}

/// A dense embedding of a text, by any model (one dimension per project).
pub type Embedding = Vec<f32>;

/// The command line's `--embedding-file`: a file holding a JSON array of numbers.
fn embedding_file(path: &str) -> Result<Embedding, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    serde_json::from_str(&text).map_err(|_| format!("{path} is not a JSON array of numbers"))
}

fn ten() -> usize {
    10
}
fn three() -> usize {
    3
}
/// The longest list a listing operation returns unless asked (`gaps`, `associations`), on
/// every surface.
pub const DEFAULT_LIMIT: usize = 20;

fn twenty() -> usize {
    DEFAULT_LIMIT
}
/// The tokens a caller has for a context pack unless it says (`pack`'s `available`).
pub const DEFAULT_AVAILABLE: usize = 4000;

fn available_default() -> usize {
    DEFAULT_AVAILABLE
}
fn one() -> f64 {
    1.0
}
fn user() -> String {
    "user".to_owned()
}
fn message() -> String {
    "message".to_owned()
}
fn project_ownership() -> String {
    "project".to_owned()
}
fn reminder() -> String {
    "reminder".to_owned()
}
fn agent_default() -> String {
    "agent".to_owned()
}

/// One observation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Observe {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// The content.
    #[schemars(length(min = 1))]
    pub text: String,
    /// `user`, `assistant`, `tool`, `system` (default `user`).
    #[serde(default = "user")]
    #[arg(long, default_value = "user")]
    #[schemars(with = "crate::ledger::Role")]
    pub role: String,
    /// `message`, `observation`, `action`, ... (default `message`).
    #[serde(default = "message")]
    #[arg(long, default_value = "message")]
    #[schemars(with = "crate::ledger::EventKind")]
    pub kind: String,
    /// Thread.
    #[serde(default)]
    #[arg(long)]
    pub thread: Option<String>,
    /// Session.
    #[serde(default)]
    #[arg(long)]
    pub session: Option<String>,
    /// Agent.
    #[serde(default)]
    #[arg(long)]
    pub agent: Option<String>,
    /// The document or collection the content comes from.
    #[serde(default)]
    #[arg(long)]
    pub source: Option<String>,
    /// The caller's id for the event, unique per project: a retry with the same id and
    /// content is the stored event.
    #[serde(default)]
    #[arg(long)]
    pub source_id: Option<String>,
    /// Who spoke, by name.
    #[serde(default)]
    #[arg(long)]
    pub speaker: Option<String>,
    /// When it happened (default now).
    #[serde(default)]
    #[arg(long)]
    pub at: Option<Time>,
    /// The content's dense embedding.
    #[serde(default)]
    #[arg(long = "embedding-file", value_name = "FILE", value_parser = embedding_file)]
    pub embedding: Option<Embedding>,
}

impl Observe {
    fn event(&self) -> ApiResult<NewEvent> {
        let mut e = NewEvent::new(
            project(&self.project)?,
            Role::parse(&self.role)?,
            EventKind::parse(&self.kind)?,
            self.text.clone(),
        );
        e.thread.clone_from(&self.thread);
        e.session.clone_from(&self.session);
        e.agent.clone_from(&self.agent);
        e.source.clone_from(&self.source);
        e.source_id.clone_from(&self.source_id);
        e.speaker.clone_from(&self.speaker);
        if let Some(v) = &self.embedding {
            if v.is_empty() {
                return Err(ApiError::invalid("embedding: the array is empty"));
            }
            e.embedding = Some(v.clone());
        }
        if let Some(at) = &self.at {
            e = e.at(at.ms("at")?);
        }
        Ok(e)
    }
}

/// Several observations, appended in one transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ObserveBatch {
    /// The observations (each names its project).
    pub events: Vec<Observe>,
}

impl ObserveBatch {
    /// Observations from a file: a JSON array of `observe` objects, or one per line.
    ///
    /// # Errors
    /// `invalid_argument` for an unreadable file; `invalid_request` naming the line and
    /// column of what does not parse.
    pub fn from_file(file: &std::path::Path) -> ApiResult<Self> {
        let name = format!("observations {}", file.display());
        let text = std::fs::read_to_string(file)
            .map_err(|e| ApiError::invalid(format!("cannot read {name}: {e}")))?;
        let refused = |what: String| ApiError::new(crate::base::Reason::InvalidRequest, what);
        let events = if text.trim_start().starts_with('[') {
            serde_json::from_str(&text).map_err(|e| refused(crate::input::json_error(&name, &e)))?
        } else {
            text.lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, l)| {
                    serde_json::from_str(l).map_err(|e| {
                        refused(crate::input::json_error(
                            &format!("{name} line {}", i + 1),
                            &e,
                        ))
                    })
                })
                .collect::<ApiResult<_>>()?
        };
        Ok(Self { events })
    }
}

/// A ranked recall (or a context pack with `pack`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Recall {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// The query: free text, "quoted phrases" and filters.
    pub query: String,
    /// Results (default 10).
    #[serde(default = "ten")]
    #[arg(long, default_value_t = ten())]
    #[schemars(range(min = 1, max = crate::MAX_RECALL_K))]
    pub k: usize,
    /// The caller's session: its own events are suppressed as echo.
    #[serde(default)]
    #[arg(long)]
    pub session: Option<String>,
    /// Chronological neighbours attached on each side of every result.
    #[serde(default)]
    #[arg(long, default_value_t = 0)]
    pub context: usize,
    /// The query's dense embedding.
    #[serde(default)]
    #[arg(long = "embedding-file", value_name = "FILE", value_parser = embedding_file)]
    pub embedding: Option<Embedding>,
    /// Read-your-writes: a sequence (the id a write returned) this node's ledger must have
    /// reached first; refused as `not_caught_up` after `wait_ms`.
    #[serde(default)]
    #[arg(long = "at-least", value_name = "SEQUENCE")]
    pub at_least: Option<u64>,
    /// How long to wait for `at_least` (default 2000, at most 60000).
    #[serde(default)]
    #[arg(long = "wait-ms", value_name = "MS")]
    #[schemars(range(max = 60_000))]
    pub wait_ms: Option<u64>,
}

/// A budgeted context pack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Pack {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// The query.
    pub query: String,
    /// Tokens available to the caller (default 4000).
    #[serde(default = "available_default")]
    #[arg(long, default_value_t = DEFAULT_AVAILABLE)]
    #[schemars(range(min = 4))]
    pub available: usize,
    /// Requested budget (capped at 30 % of `available`).
    #[serde(default)]
    #[arg(long)]
    pub budget: Option<usize>,
    /// The caller's session.
    #[serde(default)]
    #[arg(long)]
    pub session: Option<String>,
    /// The query's dense embedding.
    #[serde(default)]
    #[arg(long = "embedding-file", value_name = "FILE", value_parser = embedding_file)]
    pub embedding: Option<Embedding>,
    /// Read-your-writes: a sequence (the id a write returned) this node's ledger must have
    /// reached first; refused as `not_caught_up` after `wait_ms`.
    #[serde(default)]
    #[arg(long = "at-least", value_name = "SEQUENCE")]
    pub at_least: Option<u64>,
    /// How long to wait for `at_least` (default 2000, at most 60000).
    #[serde(default)]
    #[arg(long = "wait-ms", value_name = "MS")]
    #[schemars(range(max = 60_000))]
    pub wait_ms: Option<u64>,
}

/// Assert a belief backed by evidence (a one-operation plan).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BeliefAssert {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Canonical key.
    #[arg(long)]
    pub key: String,
    /// The statement.
    pub statement: String,
    /// `user`, `project`, `agent` (default `project`).
    #[serde(default = "project_ownership")]
    #[arg(long, default_value = "project")]
    pub ownership: String,
    /// Evidence event ids.
    #[arg(long, required = true)]
    pub evidence: Vec<u64>,
    /// Confidence in [0, 1] (default 1).
    #[serde(default = "one")]
    #[arg(long, default_value_t = one())]
    pub confidence: f64,
    /// Idempotency key (default: derived from the whole operation).
    #[serde(default)]
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

/// Correct the active belief of a key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BeliefCorrect {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Canonical key.
    #[arg(long)]
    pub key: String,
    /// The corrected statement.
    pub statement: String,
    /// Evidence event ids.
    #[arg(long, required = true)]
    pub evidence: Vec<u64>,
    /// The version being corrected (optimistic concurrency).
    #[serde(default)]
    #[arg(long)]
    pub expected_version: Option<u64>,
    /// Idempotency key (default: derived from the whole operation).
    #[serde(default)]
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

/// A key of a project.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BeliefKey {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Key.
    #[arg(long)]
    pub key: String,
}

/// The belief of a key valid at a time (event time).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct BeliefAt {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Key.
    #[arg(long)]
    pub key: String,
    /// The time.
    #[arg(long)]
    pub at: Time,
}

/// A governance plan (see `docs/FORMAT.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPlan {
    /// The plan.
    pub plan: Plan,
}

impl ApplyPlan {
    /// A governance plan from a JSON file.
    ///
    /// # Errors
    /// `invalid_argument` for an unreadable file; `invalid_plan` naming the line and
    /// column of what does not parse.
    pub fn from_file(file: &std::path::Path) -> ApiResult<Self> {
        let text = std::fs::read_to_string(file)
            .map_err(|e| ApiError::invalid(format!("cannot read plan {}: {e}", file.display())))?;
        let plan = serde_json::from_str(&text).map_err(|e| {
            ApiError::new(
                crate::base::Reason::InvalidPlan,
                crate::input::json_error(&format!("plan {}", file.display()), &e),
            )
        })?;
        Ok(Self { plan })
    }
}

/// A project alone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProjectOnly {
    /// Project.
    #[arg(long)]
    pub project: String,
}

/// A project and a list length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProjectLimit {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Longest list returned (default 20).
    #[serde(default = "twenty")]
    #[arg(long, default_value_t = DEFAULT_LIMIT)]
    pub limit: usize,
}

/// A record of a project by id (episode, procedure, prospective item, candidate).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProjectId64 {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// The record's id.
    #[arg(long)]
    pub id: u64,
}

/// A governance plan of a project, by its idempotency key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct PlanKey {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// The plan's idempotency key.
    #[arg(long = "key", visible_alias = "idempotency-key")]
    pub idempotency_key: String,
}

/// Start an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct EpisodeStart {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Agent (default `agent`).
    #[serde(default = "agent_default")]
    #[arg(long, default_value = "agent")]
    pub agent: String,
}

/// Append a recorded event to an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct EpisodeAppend {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Episode id.
    #[arg(long)]
    pub episode: u64,
    /// Event id.
    #[arg(long)]
    pub event: u64,
}

/// Seal an episode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct EpisodeEnd {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Episode id.
    #[arg(long)]
    pub episode: u64,
    /// Outcome text.
    #[serde(default)]
    #[arg(long)]
    pub outcome: Option<String>,
    /// Reward in [-1, 1]: -1 a failure, 1 a success, 0 neither.
    #[serde(default)]
    #[arg(long)]
    #[schemars(range(min = -1.0, max = 1.0))]
    pub reward: Option<f64>,
}

/// Add a procedure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProcedureAdd {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Name.
    #[arg(long)]
    pub name: String,
    /// When to use it.
    #[arg(long)]
    pub trigger: String,
    /// Step instructions, in order.
    #[arg(long = "step", required = true)]
    pub steps: Vec<String>,
}

/// Procedures for a situation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProcedureSuggest {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// The situation.
    pub query: String,
    /// How many (default 3).
    #[serde(default = "three")]
    #[arg(long, default_value_t = three())]
    #[schemars(range(min = 1))]
    pub k: usize,
}

/// Record a procedure outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProcedureOutcome {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Procedure id.
    #[arg(long)]
    pub id: u64,
    /// Whether it worked (required).
    #[arg(long, action = clap::ArgAction::Set, required = true)]
    pub success: bool,
}

/// Record a pending prospective item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProspectivePropose {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// `intention`, `commitment`, `reminder`, `open_loop`, `plan` (default `reminder`).
    #[serde(default = "reminder")]
    #[arg(long, default_value = "reminder")]
    #[schemars(with = "crate::governance::ProspectiveKind")]
    pub kind: String,
    /// What it is about.
    pub text: String,
    /// The event that created it.
    #[arg(long)]
    pub event: u64,
    /// When it is due.
    #[serde(default)]
    #[arg(long)]
    pub due: Option<Time>,
}

/// Confirm an item by a later, affirmative user event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProspectiveConfirm {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Item id.
    #[arg(long)]
    pub id: u64,
    /// The confirming event.
    #[arg(long)]
    pub event: u64,
}

/// Postpone an item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProspectiveDefer {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Item id.
    #[arg(long)]
    pub id: u64,
    /// New due time.
    #[arg(long)]
    pub until: Time,
}

/// Items due at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ProspectiveDue {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// The time (default now).
    #[serde(default)]
    #[arg(long)]
    pub at: Option<Time>,
}

/// A project map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct MapRequest {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Longest list shown.
    #[serde(default = "map_limit")]
    #[arg(long, default_value_t = crate::DEFAULT_MAP_LIMIT)]
    pub limit: usize,
}

fn map_limit() -> usize {
    crate::DEFAULT_MAP_LIMIT
}

/// Erase a project from every store: `confirm` must be `true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct ForgetProject {
    /// Project.
    #[arg(long)]
    pub project: String,
    /// Must be `true`: erasure cannot be undone.
    #[serde(default)]
    #[arg(long, visible_alias = "yes")]
    pub confirm: bool,
}

/// Pending schema migrations (the open memory has applied them; a dry run lists none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Migrate {
    /// Only report.
    #[serde(default)]
    #[arg(long)]
    pub dry_run: bool,
}

/// Nothing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct Empty {}

impl Request {
    /// A request from a JSON value (`{"op": ..., ...}`), with a named refusal naming the
    /// field when it does not fit.
    ///
    /// # Errors
    /// `invalid_request`.
    pub fn from_json(value: Value) -> ApiResult<Self> {
        let Some(op) = value.get("op").and_then(Value::as_str).map(str::to_owned) else {
            return Err(ApiError::new(
                crate::base::Reason::InvalidRequest,
                "a request names its operation as a string in `op`",
            ));
        };
        let known = catalog::OPERATION_NAMES;
        if !known.contains(&op.as_str()) {
            let names: Vec<String> = known.iter().map(|o| format!("`{o}`")).collect();
            return Err(ApiError::new(
                crate::base::Reason::UnknownOperation,
                format!("no operation `{op}`, expected one of {}", names.join(", ")),
            ));
        }
        Self::deserialize(&value).map_err(|e| {
            // serde's message for a tagged request names no field, and its words name
            // Rust types: the catalog's schema of the operation names the field.
            let named = value
                .as_object()
                .and_then(|object| catalog::misfit(&op, object));
            ApiError::new(
                crate::base::Reason::InvalidRequest,
                named.unwrap_or_else(|| {
                    tracing::debug!("request misfit: {e}");
                    format!(
                        "the request does not fit operation `{op}`: see its schema (`GET /v1/openapi.json`, or the MCP tool's input schema)"
                    )
                }),
            )
        })
    }
}

/// The projects a request touches (`None`: the whole memory, as `stats`): what a token's
/// scope is checked against. [`Request::projects`] asks its request type.
pub trait Touches {
    /// The projects.
    fn projects(&self) -> Option<Vec<&str>>;
}

/// Request types of one project, named by their `project` field.
macro_rules! one_project {
    ($($t:ty),* $(,)?) => {$(
        impl Touches for $t {
            fn projects(&self) -> Option<Vec<&str>> {
                Some(vec![self.project.as_str()])
            }
        }
    )*};
}
one_project!(
    Observe,
    Recall,
    Pack,
    BeliefAssert,
    BeliefCorrect,
    BeliefKey,
    BeliefAt,
    ProjectOnly,
    ProjectLimit,
    ProjectId64,
    PlanKey,
    EpisodeStart,
    EpisodeAppend,
    EpisodeEnd,
    ProcedureAdd,
    ProcedureSuggest,
    ProcedureOutcome,
    ProspectivePropose,
    ProspectiveConfirm,
    ProspectiveDefer,
    ProspectiveDue,
    MapRequest,
    ForgetProject,
);

impl Touches for ObserveBatch {
    fn projects(&self) -> Option<Vec<&str>> {
        Some(self.events.iter().map(|e| e.project.as_str()).collect())
    }
}

impl Touches for ApplyPlan {
    fn projects(&self) -> Option<Vec<&str>> {
        Some(vec![self.plan.project.as_str()])
    }
}

/// The whole memory.
impl Touches for Empty {
    fn projects(&self) -> Option<Vec<&str>> {
        None
    }
}

/// The whole memory.
impl Touches for Migrate {
    fn projects(&self) -> Option<Vec<&str>> {
        None
    }
}

fn project(name: &str) -> ApiResult<ProjectId> {
    Ok(ProjectId::new(name).map_err(crate::Error::from)?)
}

/// The default idempotency key of a one-operation plan: derived from the whole operation
/// (kind, key, statement, evidence, versions), so repeating a request is
/// `already_applied` while any change to it is a new plan.
pub fn default_key(op: &Op) -> String {
    let bytes = serde_json::to_vec(op).expect("operations serialize");
    format!("op-{:016x}", xxhash_rust::xxh3::xxh3_64(&bytes))
}

/// An applied (or already applied) plan; a rejected one is the error (`detail` carries
/// the rejection's fields and operation index).
fn governed(outcome: PlanOutcome) -> ApiResult<PlanOutcome> {
    match outcome {
        PlanOutcome::Rejected(r) => {
            let mut detail = serde_json::to_value(&r.reason)?;
            detail["op_index"] = json!(r.op_index);
            let at = r
                .op_index
                .map(|i| format!(" at operation {i}"))
                .unwrap_or_default();
            Err(ApiError::refusal(
                r.reason.reason(),
                detail,
                format!(
                    "governance rejected the plan{at}: {}; nothing was written",
                    r.reason
                ),
            ))
        }
        other => Ok(other),
    }
}

/// Executes operations against one [`Memory`]: each method is one operation, typed; the
/// transports call [`execute`](Self::execute).
#[derive(Clone, Copy)]
pub struct Api<'a> {
    memory: &'a Memory,
}

impl<'a> Api<'a> {
    /// The operations of `memory`.
    pub fn new(memory: &'a Memory) -> Self {
        Self { memory }
    }

    /// Executes `request`, returning its result as JSON.
    ///
    /// # Errors
    /// The operation's [`ApiError`].
    pub fn execute(&self, request: &Request) -> ApiResult<Value> {
        to_json(&self.respond(request)?)
    }

    /// Runs `request` and returns its typed result ([`Response`]; its JSON is what
    /// [`execute`](Self::execute) returns).
    ///
    /// # Errors
    /// As [`execute`](Self::execute).
    pub fn respond(&self, request: &Request) -> ApiResult<Response> {
        let m = self.memory;
        Ok(match request {
            Request::Observe(r) => {
                let id = self.observe(r)?;
                Response::Observe(Observed {
                    event_id: id.0,
                    episode: self.joined_episode(r, id)?,
                })
            }
            Request::ObserveBatch(r) => Response::ObserveBatch(ObservedBatch {
                event_ids: self.observe_batch(r)?.iter().map(|e| e.0).collect(),
            }),
            Request::RecordEvent(r) => Response::RecordEvent(Box::new(m.record_event(r.event()?)?)),
            Request::Recall(r) => Response::Recall(Box::new(self.recall(r)?)),
            Request::Pack(r) => Response::Pack(Box::new(self.pack(r)?)),
            Request::BeliefAssert(r) => Response::BeliefAssert(self.belief_assert(r)?),
            Request::BeliefCorrect(r) => Response::BeliefCorrect(self.belief_correct(r)?),
            Request::BeliefCurrent(r) => Response::BeliefCurrent(Box::new(self.belief_current(r)?)),
            Request::BeliefAt(r) => Response::BeliefAt(Box::new(self.belief_at(r)?)),
            Request::BeliefHistory(r) => Response::BeliefHistory(self.belief_history(r)?),
            Request::ApplyPlan(r) => Response::ApplyPlan(governed(m.apply_plan(&r.plan)?)?),
            Request::PlanAudit(r) => Response::PlanAudit(self.plan_audit(r)?),
            Request::MemoryShow(r) => Response::MemoryShow(Box::new(self.memory_show(r)?)),
            Request::EpisodeStart(r) => Response::EpisodeStart(EpisodeStarted {
                episode: self.episode_start(r)?.0,
            }),
            Request::EpisodeAppend(r) => {
                let (position, already) = self.episode_append(r)?;
                Response::EpisodeAppend(EpisodeAppended {
                    episode: r.episode,
                    event: r.event,
                    position,
                    outcome: if already {
                        "already_in_episode"
                    } else {
                        "appended"
                    }
                    .to_owned(),
                    already_in_episode: already,
                })
            }
            Request::EpisodeEnd(r) => Response::EpisodeEnd(self.episode_end(r)?),
            Request::ProcedureAdd(r) => Response::ProcedureAdd(ProcedureAdded {
                procedure: self.procedure_add(r)?.0,
            }),
            Request::ProcedureSuggest(r) => Response::ProcedureSuggest(self.procedure_suggest(r)?),
            Request::ProcedureOutcome(r) => Response::ProcedureOutcome(Box::new(
                m.record_procedure_outcome(&project(&r.project)?, ProcedureId(r.id), r.success)?,
            )),
            Request::ProspectivePropose(r) => {
                Response::ProspectivePropose(Box::new(self.prospective_propose(r)?))
            }
            Request::ProspectiveConfirm(r) => {
                Response::ProspectiveConfirm(Box::new(m.ledger().confirm_prospective(
                    &project(&r.project)?,
                    ProspectiveId(r.id),
                    EventId(r.event),
                )??))
            }
            Request::ProspectiveDefer(r) => {
                Response::ProspectiveDefer(Box::new(m.ledger().defer_prospective(
                    &project(&r.project)?,
                    ProspectiveId(r.id),
                    r.until.ms("until")?,
                )??))
            }
            Request::ProspectiveComplete(r) => Response::ProspectiveComplete(Box::new(
                m.ledger()
                    .complete_prospective(&project(&r.project)?, ProspectiveId(r.id))??,
            )),
            Request::ProspectiveReject(r) => Response::ProspectiveReject(Box::new(
                m.ledger()
                    .reject_prospective(&project(&r.project)?, ProspectiveId(r.id))??,
            )),
            Request::ProspectiveShow(r) => {
                let (item, history) = m
                    .ledger()
                    .prospective_history(&project(&r.project)?, ProspectiveId(r.id))??;
                Response::ProspectiveShow(Box::new(ProspectiveShown { item, history }))
            }
            Request::ProspectiveDue(r) => Response::ProspectiveDue(self.prospective_due(r)?),
            Request::EpisodeShow(r) => Response::EpisodeShow(Box::new(self.episode_show(r)?)),
            Request::Concepts(r) => Response::Concepts(self.concepts(r)?),
            Request::ConceptShow(r) => Response::ConceptShow(Box::new(self.concept_show(r)?)),
            Request::Candidates(r) => Response::Candidates(self.candidates(r)?),
            Request::CandidateApprove(r) => Response::CandidateApprove(self.candidate(r, true)?),
            Request::CandidateReject(r) => Response::CandidateReject(self.candidate(r, false)?),
            Request::Gaps(r) => Response::Gaps(self.gaps(r)?),
            Request::Associations(r) => Response::Associations(self.associations(r)?),
            Request::Proposals(r) => Response::Proposals(self.proposals(r)?),
            Request::Pulse(r) => Response::Pulse(Box::new(self.pulse(r)?)),
            Request::Stats(_) => Response::Stats(self.stats()?),
            Request::Map(r) => Response::Map(Box::new(self.map(r)?)),
            Request::Migrate(r) => {
                let r = m.ledger().migrate(r.dry_run)?;
                Response::Migrate(Migrated {
                    from: r.from,
                    to: r.to,
                    dry_run: r.dry_run,
                    migrations: r.migrations,
                })
            }
            Request::ForgetProject(r) => Response::ForgetProject(Box::new(self.forget_project(r)?)),
        })
    }

    /// Starts an episode (sealing the agent's open one).
    ///
    /// # Errors
    /// Bad project; SQLite errors.
    pub fn episode_start(&self, r: &EpisodeStart) -> ApiResult<EpisodeId> {
        Ok(self.memory.start_episode(&project(&r.project)?, &r.agent)?)
    }

    /// Candidate beliefs awaiting governance.
    ///
    /// # Errors
    /// Bad or unknown project; SQLite errors.
    pub fn candidates(&self, r: &ProjectOnly) -> ApiResult<Vec<crate::governance::Belief>> {
        let p = project(&r.project)?;
        self.memory.require_project(&p)?;
        Ok(self
            .memory
            .ledger()
            .beliefs_with_status(&p, BeliefStatus::Candidate)?)
    }

    /// The current version of a belief.
    ///
    /// # Errors
    /// Bad or unknown project; SQLite errors.
    pub fn belief_current(&self, r: &BeliefKey) -> ApiResult<crate::governance::Belief> {
        let p = project(&r.project)?;
        match self.memory.current(&p, &r.key)? {
            Some(b) => Ok(b),
            None => Err(self.no_belief(&p, &r.key, "active")?),
        }
    }

    /// `not_found` for a read of `key` that found nothing (`what`: which version was
    /// asked): naming how many versions the key has, or that no belief ever had it.
    fn no_belief(&self, p: &ProjectId, key: &str, what: &str) -> ApiResult<ApiError> {
        let versions = self.memory.belief_history(p, key)?.len();
        Ok(ApiError::new(
            crate::base::Reason::NotFound,
            if versions == 0 {
                format!("project `{p}` has no belief with key `{key}`")
            } else {
                format!(
                    "belief `{key}` of project `{p}` has no {what} version ({versions} in its history: `belief history`)"
                )
            },
        ))
    }

    /// The version of a belief valid at a time.
    ///
    /// # Errors
    /// Bad time or project; SQLite errors.
    pub fn belief_at(&self, r: &BeliefAt) -> ApiResult<crate::governance::Belief> {
        let p = project(&r.project)?;
        match self.memory.belief_at(&p, &r.key, r.at.ms("at")?)? {
            Some(b) => Ok(b),
            None => Err(self.no_belief(&p, &r.key, "valid at that time")?),
        }
    }

    /// Every version of a belief, oldest first.
    ///
    /// # Errors
    /// Bad or unknown project; SQLite errors.
    pub fn belief_history(&self, r: &BeliefKey) -> ApiResult<Vec<crate::governance::Belief>> {
        let p = project(&r.project)?;
        let history = self.memory.belief_history(&p, &r.key)?;
        if history.is_empty() {
            return Err(self.no_belief(&p, &r.key, "")?);
        }
        Ok(history)
    }

    /// Procedures for a situation, best first.
    ///
    /// # Errors
    /// Bad or unknown project; SQLite errors.
    pub fn procedure_suggest(
        &self,
        r: &ProcedureSuggest,
    ) -> ApiResult<Vec<crate::cognition::Suggestion>> {
        if r.query.trim().is_empty() {
            return Err(ApiError::invalid(
                "query: the situation is empty: describe it to be matched against triggers",
            ));
        }
        if r.k == 0 {
            return Err(ApiError::invalid(
                "k: 0 suggestions were asked for; ask for at least 1",
            ));
        }
        Ok(self
            .memory
            .suggest_procedures(&project(&r.project)?, &r.query, r.k)?)
    }

    /// Knowledge gaps.
    ///
    /// # Errors
    /// Bad or unknown project; SQLite errors.
    pub fn gaps(&self, r: &ProjectLimit) -> ApiResult<Vec<crate::cognition::Gap>> {
        Ok(self.memory.knowledge_gaps(&project(&r.project)?, r.limit)?)
    }

    /// Candidate associations.
    ///
    /// # Errors
    /// Bad or unknown project; SQLite errors.
    pub fn associations(&self, r: &ProjectLimit) -> ApiResult<Vec<crate::cognition::Association>> {
        Ok(self.memory.associations(&project(&r.project)?, r.limit)?)
    }

    /// Self-improvement proposals.
    ///
    /// # Errors
    /// Bad or unknown project; SQLite errors.
    pub fn proposals(&self, r: &ProjectOnly) -> ApiResult<Vec<crate::cognition::Proposal>> {
        Ok(self.memory.proposals(&project(&r.project)?)?)
    }

    /// One pulse tick.
    ///
    /// # Errors
    /// Bad or unknown project, a read-only memory; ledger and store errors.
    pub fn pulse(&self, r: &ProjectOnly) -> ApiResult<crate::cognition::PulseReceipt> {
        Ok(self.memory.pulse_tick(&project(&r.project)?)?)
    }

    /// Counts per project.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn stats(&self) -> ApiResult<Vec<crate::ProjectStats>> {
        Ok(self.memory.stats()?)
    }

    /// An overview of a project.
    ///
    /// # Errors
    /// Bad or unknown project; SQLite errors.
    pub fn map(&self, r: &MapRequest) -> ApiResult<crate::MemoryMap> {
        Ok(self.memory.map(&project(&r.project)?, r.limit)?)
    }

    /// Erases a project; refused as `confirmation_required` without `confirm`.
    ///
    /// # Errors
    /// Unconfirmed; bad project; ledger and store errors.
    pub fn forget_project(&self, r: &ForgetProject) -> ApiResult<crate::ForgetReceipt> {
        if !r.confirm {
            return Err(ApiError::new(
                crate::base::Reason::ConfirmationRequired,
                format!(
                    "erasing project `{}` cannot be undone: repeat with confirmation (`confirm: true`; on the command line `--yes`)",
                    r.project
                ),
            ));
        }
        Ok(self.memory.forget_project(&project(&r.project)?)?)
    }

    /// Records one observation.
    ///
    /// # Errors
    /// Bad role, kind, time or project; ledger and store errors.
    pub fn observe(&self, r: &Observe) -> ApiResult<EventId> {
        Ok(self.memory.observe(r.event()?)?)
    }

    /// Records observations in one transaction.
    ///
    /// # Errors
    /// As [`observe`](Self::observe); an empty batch is `invalid_argument`.
    pub fn observe_batch(&self, r: &ObserveBatch) -> ApiResult<Vec<EventId>> {
        if r.events.is_empty() {
            return Err(ApiError::invalid("events: the batch is empty"));
        }
        let events = r
            .events
            .iter()
            .map(Observe::event)
            .collect::<ApiResult<Vec<_>>>()?;
        Ok(self.memory.observe_batch(&events)?)
    }

    /// A ranked recall.
    ///
    /// Read-your-writes: with `at_least`, it first waits for this node's ledger to reach
    /// that sequence.
    ///
    /// # Errors
    /// As [`Memory::recall_with`].
    pub fn recall(&self, r: &Recall) -> ApiResult<crate::RecallResult> {
        let mut rq = crate::RecallQuery::new(&r.query, r.k);
        rq.session = r.session.as_deref();
        rq.context = r.context;
        rq.embedding = r.embedding.as_deref();
        read_your_writes(&mut rq, r.at_least, r.wait_ms);
        Ok(self.memory.recall_with(&project(&r.project)?, &rq)?)
    }

    /// A context pack.
    ///
    /// # Errors
    /// As [`Memory::recall_pack_with`].
    pub fn pack(&self, r: &Pack) -> ApiResult<crate::recall::Pack> {
        let mut rq = crate::RecallQuery::new(&r.query, 20);
        rq.session = r.session.as_deref();
        rq.embedding = r.embedding.as_deref();
        read_your_writes(&mut rq, r.at_least, r.wait_ms);
        Ok(self
            .memory
            .recall_pack_with(&project(&r.project)?, &rq, r.available, r.budget)?)
    }

    /// Asserts a belief (one-operation plan, key derived from the operation by default).
    ///
    /// # Errors
    /// A governance rejection (its reason), bad ownership or project.
    pub fn belief_assert(&self, r: &BeliefAssert) -> ApiResult<PlanOutcome> {
        let op = Op::Assert {
            key: r.key.clone(),
            statement: r.statement.clone(),
            ownership: Ownership::parse(&r.ownership)?,
            agent: None,
            confidence: r.confidence,
            evidence: r.evidence.iter().copied().map(EventId).collect(),
        };
        self.single(&r.project, r.idempotency_key.clone(), op)
    }

    /// Corrects the active belief of a key.
    ///
    /// # Errors
    /// A governance rejection (its reason).
    pub fn belief_correct(&self, r: &BeliefCorrect) -> ApiResult<PlanOutcome> {
        let op = Op::Correct {
            key: r.key.clone(),
            statement: r.statement.clone(),
            evidence: r.evidence.iter().copied().map(EventId).collect(),
            expected_version: r.expected_version,
            confidence: 1.0,
        };
        self.single(&r.project, r.idempotency_key.clone(), op)
    }

    /// Applies a governance plan.
    ///
    /// # Errors
    /// A governance rejection (its reason).
    pub fn apply_plan(&self, plan: &Plan) -> ApiResult<PlanOutcome> {
        governed(self.memory.apply_plan(plan)?)
    }

    /// Appends an event to an episode; returns its position and whether the episode held
    /// it already.
    ///
    /// # Errors
    /// As [`Memory::append_event`].
    pub fn episode_append(&self, r: &EpisodeAppend) -> ApiResult<(usize, bool)> {
        match self.memory.append_event(
            &project(&r.project)?,
            EpisodeId(r.episode),
            EventId(r.event),
        )? {
            crate::cognition::AppendOutcome::Appended(position) => Ok((position, false)),
            crate::cognition::AppendOutcome::AlreadyIn(position) => Ok((position, true)),
            crate::cognition::AppendOutcome::TopicShift => Err(ApiError::new(
                crate::base::Reason::Internal,
                "an explicit append did not append",
            )),
        }
    }

    /// The episode an observed event joined: its agent's open episode, when that holds
    /// it (an agent opts in by starting one; a topic shift may have chained a new one).
    ///
    /// # Errors
    /// SQLite errors.
    fn joined_episode(&self, r: &Observe, id: EventId) -> ApiResult<Option<u64>> {
        let Some(agent) = r.agent.as_deref() else {
            return Ok(None);
        };
        let p = project(&r.project)?;
        let cognition = self.memory.cognition();
        let Some(open) = cognition.open_episode(&p, agent)? else {
            return Ok(None);
        };
        Ok(cognition.position_in(open, id)?.map(|_| open.0))
    }

    /// One stored memory: its event, access count and LTP strength (what places it in a
    /// tier), its tier, and the beliefs citing it.
    ///
    /// # Errors
    /// `unknown_project`; `unknown_event` for an event the project does not hold.
    pub fn memory_show(&self, r: &ProjectId64) -> ApiResult<MemoryShown> {
        let p = project(&r.project)?;
        self.memory.require_project(&p)?;
        let id = EventId(r.id);
        let event = self
            .memory
            .ledger()
            .get(&p, id)?
            .ok_or(LedgerError::UnknownEvent(id))?;
        let tiers = self.memory.vectors();
        let trace = tiers.trace(&p, crate::base::VectorId(r.id));
        Ok(MemoryShown {
            event,
            accesses: trace.as_ref().map(|t| t.accesses),
            strength: tiers.strength(&p, crate::base::VectorId(r.id)),
            tier: trace.as_ref().map(|t| {
                match t.home {
                    crate::store::Tier::Cold => "cold",
                    crate::store::Tier::Warm | crate::store::Tier::Hot => "warm",
                }
                .to_owned()
            }),
            hot: trace.as_ref().is_some_and(|t| t.in_hot),
            beliefs: self
                .memory
                .ledger()
                .beliefs_citing(&p, id)?
                .into_iter()
                .map(|(b, key, version, status)| (b.0, key, version, status))
                .collect(),
        })
    }

    /// What an applied plan changed: one line per operation, in order (the operation, the
    /// belief it wrote, its outcome).
    ///
    /// # Errors
    /// `unknown_project`; `not_found` for a key no applied plan of the project has.
    pub fn plan_audit(&self, r: &PlanKey) -> ApiResult<Vec<AuditLine>> {
        let p = project(&r.project)?;
        self.memory.require_project(&p)?;
        let rows = self.memory.ledger().plan_audit(&p, &r.idempotency_key)?;
        if rows.is_empty() {
            return Err(ApiError::new(
                crate::base::Reason::NotFound,
                format!(
                    "no plan with idempotency key `{}` was applied in project `{}`",
                    r.idempotency_key, r.project
                ),
            ));
        }
        Ok(rows
            .into_iter()
            .map(|row| AuditLine {
                op_index: row.op_index,
                op: row.op,
                belief: row.belief.map(|b| b.0),
                detail: serde_json::from_str(&row.detail).unwrap_or(Value::String(row.detail)),
            })
            .collect())
    }

    /// One episode as stored: its events in order, status, outcome, reward and the
    /// previous and next episodes of its agent.
    ///
    /// # Errors
    /// `unknown_project`; `not_found` for an episode the project does not hold.
    pub fn episode_show(&self, r: &ProjectId64) -> ApiResult<crate::cognition::Episode> {
        let p = project(&r.project)?;
        self.memory.require_project(&p)?;
        Ok(self.memory.cognition().episode(&p, EpisodeId(r.id))?)
    }

    /// The project's concepts, in id order.
    ///
    /// # Errors
    /// `unknown_project`; SQLite errors.
    pub fn concepts(&self, r: &ProjectOnly) -> ApiResult<Vec<ConceptShown>> {
        let p = project(&r.project)?;
        self.memory.require_project(&p)?;
        Ok(self
            .memory
            .cognition()
            .concepts(&p)?
            .into_iter()
            .map(|c| ConceptShown {
                id: c.id.0,
                label: c.label,
                support: c.support.iter().map(|e| e.0).collect(),
                reliability: c.reliability,
                successes: c.outcomes.0,
                failures: c.outcomes.1,
                episodes: Vec::new(),
            })
            .collect())
    }

    /// One concept with each supporting episode (its events, outcome and links).
    ///
    /// # Errors
    /// `unknown_project`; `not_found` for a concept the project does not hold.
    pub fn concept_show(&self, r: &ProjectId64) -> ApiResult<ConceptShown> {
        let p = project(&r.project)?;
        let mut concept = self
            .concepts(&ProjectOnly {
                project: r.project.clone(),
            })?
            .into_iter()
            .find(|c| c.id == r.id)
            .ok_or(LedgerError::NotFound {
                what: "concept",
                id: r.id,
            })?;
        for &episode in &concept.support {
            concept
                .episodes
                .push(self.memory.cognition().episode(&p, EpisodeId(episode))?);
        }
        Ok(concept)
    }

    /// Seals an episode; returns its status, outcome and reward as stored.
    ///
    /// # Errors
    /// As [`Memory::end_episode`].
    pub fn episode_end(&self, r: &EpisodeEnd) -> ApiResult<EpisodeEnded> {
        let p = project(&r.project)?;
        self.memory
            .end_episode(&p, EpisodeId(r.episode), r.outcome.as_deref(), r.reward)?;
        let e = self.memory.cognition().episode(&p, EpisodeId(r.episode))?;
        Ok(EpisodeEnded {
            episode: r.episode,
            status: e.status,
            outcome: e.outcome,
            reward: e.reward,
        })
    }

    /// Adds a procedure.
    ///
    /// # Errors
    /// No steps, a trigger without words.
    pub fn procedure_add(&self, r: &ProcedureAdd) -> ApiResult<ProcedureId> {
        let steps: Vec<Step> = r
            .steps
            .iter()
            .map(|instruction| Step {
                instruction: instruction.clone(),
                code: None,
                tool_call: None,
            })
            .collect();
        Ok(self
            .memory
            .add_procedure(&project(&r.project)?, &r.name, &r.trigger, &steps)?)
    }

    /// Records a pending prospective item.
    ///
    /// # Errors
    /// Bad kind, time, source event.
    pub fn prospective_propose(
        &self,
        r: &ProspectivePropose,
    ) -> ApiResult<crate::governance::ProspectiveItem> {
        let due = r.due.as_ref().map(|d| d.ms("due")).transpose()?;
        Ok(self.memory.ledger().propose_prospective(
            &project(&r.project)?,
            ProspectiveKind::parse(&r.kind)?,
            &r.text,
            EventId(r.event),
            due,
        )?)
    }

    /// Items due at a time (default now).
    ///
    /// # Errors
    /// `unknown_project`, a bad time.
    pub fn prospective_due(
        &self,
        r: &ProspectiveDue,
    ) -> ApiResult<Vec<crate::governance::ProspectiveItem>> {
        let p = project(&r.project)?;
        self.memory.require_project(&p)?;
        let ledger = self.memory.ledger();
        let at = match &r.at {
            Some(t) => t.ms("at")?,
            None => ledger.now_ms(),
        };
        Ok(ledger.due_prospective(&p, at)?)
    }

    /// Promotes (`approve`) or rejects a candidate belief.
    ///
    /// # Errors
    /// A governance rejection (its reason).
    pub fn candidate(&self, r: &ProjectId64, approve: bool) -> ApiResult<PlanOutcome> {
        let belief = BeliefId(r.id);
        let op = if approve {
            Op::Promote {
                belief,
                expected_version: None,
            }
        } else {
            Op::Reject { belief }
        };
        self.single(&r.project, None, op)
    }

    /// A one-operation plan under `key`, else the key derived from the operation.
    fn single(&self, project_name: &str, key: Option<String>, op: Op) -> ApiResult<PlanOutcome> {
        let key = key.unwrap_or_else(|| default_key(&op));
        self.apply_plan(&Plan::single(project(project_name)?, key, op))
    }
}

/// A result as JSON.
fn to_json<T: Serialize>(x: &T) -> ApiResult<Value> {
    Ok(serde_json::to_value(x)?)
}

/// A read's sequence and its wait, from a request.
fn read_your_writes(rq: &mut crate::RecallQuery<'_>, at_least: Option<u64>, wait_ms: Option<u64>) {
    rq.at_least = at_least;
    if let Some(ms) = wait_ms {
        rq.wait = std::time::Duration::from_millis(ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_refuse_unknown_fields() {
        let r: Request = serde_json::from_str(
            r#"{"op":"recall","project":"acme","query":"editor theme","k":5}"#,
        )
        .unwrap();
        assert_eq!(r.name(), "recall");
        assert!(!r.writes());
        assert_eq!(r.projects(), Some(vec!["acme"]));
        let back: Request = serde_json::from_value(serde_json::to_value(&r).unwrap()).unwrap();
        assert_eq!(back, r);
        for bad in [
            r#"{"op":"recall","project":"acme","query":"x","kk":5}"#,
            r#"{"project":"acme"}"#,
            r#"{"op":"observe","project":"acme","text":42}"#,
        ] {
            let e = Request::from_json(serde_json::from_str(bad).unwrap()).unwrap_err();
            assert_eq!(e.reason, "invalid_request", "{bad}");
        }
        let e = Request::from_json(serde_json::json!({"op": "nope"})).unwrap_err();
        assert_eq!(e.reason, "unknown_operation");
        assert!(e.message.contains("`recall`"), "{}", e.message);
        let t: Observe =
            serde_json::from_str(r#"{"project":"p","text":"x","at":"2025-02-01T00:00:00Z"}"#)
                .unwrap();
        assert_eq!(t.at.unwrap().ms("at").unwrap(), 1_738_368_000_000);
    }
}
