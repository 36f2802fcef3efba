//! One response type per operation: what [`Api::respond`](super::Api::respond) returns and
//! what a client decodes. Every payload is `Serialize + Deserialize`; [`Response`]
//! serializes as its payload alone (the JSON the HTTP routes, the MCP tools and `--json`
//! print), and [`Response::decode`] reads that JSON back given the operation's name, which
//! the client knows because it sent the request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ApiError, ApiResult};
use crate::cognition::{
    Association, EpisodeStatus, Gap, Procedure, Proposal, PulseReceipt, Suggestion,
};
use crate::governance::{Belief, PlanOutcome, ProspectiveChange, ProspectiveItem};
use crate::ledger::Event;
use crate::recall::Pack;
use crate::{ForgetReceipt, MemoryMap, ProjectStats, RecallResult};

/// `observe`: the new event's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Observed {
    /// The event.
    pub event_id: u64,
}

/// `observe_batch`: the events' ids, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedBatch {
    /// The events.
    pub event_ids: Vec<u64>,
}

/// `episode_start`: the new episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeStarted {
    /// The episode.
    pub episode: u64,
}

/// `episode_append`: where the event went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpisodeAppended {
    /// The episode.
    pub episode: u64,
    /// The event.
    pub event: u64,
    /// Its position in the episode (0-based).
    pub position: usize,
    /// Always `appended`.
    pub outcome: String,
}

/// `episode_end`: the sealed episode's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EpisodeEnded {
    /// The episode.
    pub episode: u64,
    /// Its status (sealed).
    pub status: EpisodeStatus,
    /// The outcome given.
    pub outcome: Option<String>,
    /// The reward given.
    pub reward: Option<f64>,
}

/// `procedure_add`: the new procedure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcedureAdded {
    /// The procedure.
    pub procedure: u64,
}

/// `prospective_show`: the item's fields, plus its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProspectiveShown {
    /// The item.
    #[serde(flatten)]
    pub item: ProspectiveItem,
    /// Every transition, oldest first.
    pub history: Vec<ProspectiveChange>,
}

/// `migrate`: what was (or, for a dry run, would be) applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Migrated {
    /// Schema version before.
    pub from: u32,
    /// Schema version after.
    pub to: u32,
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// `(version, name)` of each migration.
    pub migrations: Vec<(u32, String)>,
}

/// The result of one operation; the variant is the operation's (see
/// [`Request`](super::Request)).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Response {
    /// `observe`.
    Observe(Observed),
    /// `observe_batch`.
    ObserveBatch(ObservedBatch),
    /// `record_event`: the stored event.
    RecordEvent(Box<Event>),
    /// `recall`.
    Recall(Box<RecallResult>),
    /// `pack`.
    Pack(Box<Pack>),
    /// `belief_assert`.
    BeliefAssert(PlanOutcome),
    /// `belief_correct`.
    BeliefCorrect(PlanOutcome),
    /// `belief_current`: the active version, or null.
    BeliefCurrent(Option<Box<Belief>>),
    /// `belief_at`: the version valid then, or null.
    BeliefAt(Option<Box<Belief>>),
    /// `belief_history`: every version.
    BeliefHistory(Vec<Belief>),
    /// `apply_plan`.
    ApplyPlan(PlanOutcome),
    /// `episode_start`.
    EpisodeStart(EpisodeStarted),
    /// `episode_append`.
    EpisodeAppend(EpisodeAppended),
    /// `episode_end`.
    EpisodeEnd(EpisodeEnded),
    /// `procedure_add`.
    ProcedureAdd(ProcedureAdded),
    /// `procedure_suggest`.
    ProcedureSuggest(Vec<Suggestion>),
    /// `procedure_outcome`: the procedure with its updated counts.
    ProcedureOutcome(Box<Procedure>),
    /// `prospective_propose`.
    ProspectivePropose(Box<ProspectiveItem>),
    /// `prospective_confirm`.
    ProspectiveConfirm(Box<ProspectiveItem>),
    /// `prospective_defer`.
    ProspectiveDefer(Box<ProspectiveItem>),
    /// `prospective_complete`.
    ProspectiveComplete(Box<ProspectiveItem>),
    /// `prospective_reject`.
    ProspectiveReject(Box<ProspectiveItem>),
    /// `prospective_show`.
    ProspectiveShow(Box<ProspectiveShown>),
    /// `prospective_due`.
    ProspectiveDue(Vec<ProspectiveItem>),
    /// `candidates`.
    Candidates(Vec<Belief>),
    /// `candidate_approve`.
    CandidateApprove(PlanOutcome),
    /// `candidate_reject`.
    CandidateReject(PlanOutcome),
    /// `gaps`.
    Gaps(Vec<Gap>),
    /// `associations`.
    Associations(Vec<Association>),
    /// `proposals`.
    Proposals(Vec<Proposal>),
    /// `pulse`.
    Pulse(Box<PulseReceipt>),
    /// `stats`.
    Stats(Vec<ProjectStats>),
    /// `map`.
    Map(Box<MemoryMap>),
    /// `migrate`.
    Migrate(Migrated),
    /// `forget_project`.
    ForgetProject(Box<ForgetReceipt>),
}

impl Response {
    /// Reads the JSON of operation `op`'s result (its `op` tag, as in
    /// [`Request::name`](super::Request::name)) back into its response type.
    ///
    /// # Errors
    /// `invalid_argument` for an unknown operation; `invalid_json` when the value is not
    /// that operation's result.
    pub fn decode(op: &str, value: Value) -> ApiResult<Self> {
        fn de<T: serde::de::DeserializeOwned>(op: &str, v: Value) -> ApiResult<T> {
            serde_json::from_value(v).map_err(|e| {
                ApiError::new("invalid_json", format!("not the result of `{op}`: {e}"))
            })
        }
        Ok(match op {
            "observe" => Self::Observe(de(op, value)?),
            "observe_batch" => Self::ObserveBatch(de(op, value)?),
            "record_event" => Self::RecordEvent(de(op, value)?),
            "recall" => Self::Recall(de(op, value)?),
            "pack" => Self::Pack(de(op, value)?),
            "belief_assert" => Self::BeliefAssert(de(op, value)?),
            "belief_correct" => Self::BeliefCorrect(de(op, value)?),
            "belief_current" => Self::BeliefCurrent(de(op, value)?),
            "belief_at" => Self::BeliefAt(de(op, value)?),
            "belief_history" => Self::BeliefHistory(de(op, value)?),
            "apply_plan" => Self::ApplyPlan(de(op, value)?),
            "episode_start" => Self::EpisodeStart(de(op, value)?),
            "episode_append" => Self::EpisodeAppend(de(op, value)?),
            "episode_end" => Self::EpisodeEnd(de(op, value)?),
            "procedure_add" => Self::ProcedureAdd(de(op, value)?),
            "procedure_suggest" => Self::ProcedureSuggest(de(op, value)?),
            "procedure_outcome" => Self::ProcedureOutcome(de(op, value)?),
            "prospective_propose" => Self::ProspectivePropose(de(op, value)?),
            "prospective_confirm" => Self::ProspectiveConfirm(de(op, value)?),
            "prospective_defer" => Self::ProspectiveDefer(de(op, value)?),
            "prospective_complete" => Self::ProspectiveComplete(de(op, value)?),
            "prospective_reject" => Self::ProspectiveReject(de(op, value)?),
            "prospective_show" => Self::ProspectiveShow(de(op, value)?),
            "prospective_due" => Self::ProspectiveDue(de(op, value)?),
            "candidates" => Self::Candidates(de(op, value)?),
            "candidate_approve" => Self::CandidateApprove(de(op, value)?),
            "candidate_reject" => Self::CandidateReject(de(op, value)?),
            "gaps" => Self::Gaps(de(op, value)?),
            "associations" => Self::Associations(de(op, value)?),
            "proposals" => Self::Proposals(de(op, value)?),
            "pulse" => Self::Pulse(de(op, value)?),
            "stats" => Self::Stats(de(op, value)?),
            "map" => Self::Map(de(op, value)?),
            "migrate" => Self::Migrate(de(op, value)?),
            "forget_project" => Self::ForgetProject(de(op, value)?),
            other => {
                return Err(ApiError::invalid(format!("unknown operation `{other}`")));
            }
        })
    }
}
