//! The payload types of the operations' results (the table in [`super::catalog`] names which
//! operation returns which): what [`Api::respond`](super::Api::respond) returns and
//! what a client decodes. Every payload is `Serialize + Deserialize`; [`Response`]
//! serializes as its payload alone (the JSON the HTTP routes, the MCP tools and `--json`
//! print), and [`Response::decode`] reads that JSON back given the operation's name, which
//! the client knows because it sent the request.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cognition::EpisodeStatus;
use crate::governance::{ProspectiveChange, ProspectiveItem};
use crate::ledger::Event;

/// `observe`: the new event's id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Observed {
    /// The event.
    pub event_id: u64,
    /// The episode it joined: its agent's open episode, when the agent has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub episode: Option<u64>,
}

/// `observe_batch`: the events' ids, in the order given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObservedBatch {
    /// The events.
    pub event_ids: Vec<u64>,
}

/// `episode_start`: the new episode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EpisodeStarted {
    /// The episode.
    pub episode: u64,
}

/// `episode_append`: where the event went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EpisodeAppended {
    /// The episode.
    pub episode: u64,
    /// The event.
    pub event: u64,
    /// Its position in the episode (0-based).
    pub position: usize,
    /// `appended`, or `already_in_episode` when the episode held the event already.
    pub outcome: String,
    /// The episode held the event already (nothing changed).
    #[serde(default)]
    pub already_in_episode: bool,
}

/// `episode_end`: the sealed episode's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcedureAdded {
    /// The procedure.
    pub procedure: u64,
}

/// `prospective_show`: the item's fields, plus its history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProspectiveShown {
    /// The item.
    #[serde(flatten)]
    pub item: ProspectiveItem,
    /// Every transition, oldest first.
    pub history: Vec<ProspectiveChange>,
}

/// `hypermem init`: the data directory made ready, and its schema version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Initialized {
    /// The data directory.
    pub data_dir: std::path::PathBuf,
    /// The ledger's schema version.
    pub schema_version: u32,
}

/// `hypermem serve`: where it listens (the first line it prints).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Listening {
    /// The server's URL (`http://host:port`).
    pub listening: String,
}

/// `migrate`: what was (or, for a dry run, would be) applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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

/// `memory_show`: one stored memory with what the engine keeps about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemoryShown {
    /// The raw event.
    pub event: Event,
    /// Times it was stored or recalled among the top results (long-term potentiation).
    pub accesses: Option<u64>,
    /// Its LTP strength now (importance × accesses, decayed with the time since the last
    /// access), which decides its tier.
    pub strength: Option<f64>,
    /// Its durable tier (`warm` or `cold`).
    pub tier: Option<String>,
    /// Whether a copy is in the hot tier (RAM).
    pub hot: bool,
    /// Beliefs that cite it as evidence: id, key, version, status.
    pub beliefs: Vec<(u64, String, u64, crate::governance::BeliefStatus)>,
}

/// `plan_audit`: one operation of an applied plan, as committed with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuditLine {
    /// Index of the operation in its plan.
    pub op_index: usize,
    /// The operation (`assert`, `correct`, ...).
    pub op: String,
    /// The belief it wrote, if any.
    pub belief: Option<u64>,
    /// Its outcome.
    pub detail: Value,
}

/// `concepts` / `concept_show`: a consolidated concept as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConceptShown {
    /// Concept id.
    pub id: u64,
    /// Label: the words most distinctive of its episodes.
    pub label: String,
    /// Supporting episodes.
    pub support: Vec<u64>,
    /// Beta(1, 1) posterior mean of the supporting episodes' outcomes.
    pub reliability: f64,
    /// Supporting episodes that ended with a positive reward.
    pub successes: u64,
    /// ... and with a negative one.
    pub failures: u64,
    /// With `concept_show`: each supporting episode with its events, outcome and links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub episodes: Vec<crate::cognition::Episode>,
}
