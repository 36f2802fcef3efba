//! The ledger boundary: what the layers above (cognition, governance, memory) ask of the
//! ledger, as typed operations grouped by the tables they touch. A caller runs them inside
//! [`Ledger::reading`](super::Ledger::reading) or [`Ledger::writing`](super::Ledger::writing)
//! (one transaction) through `&dyn Rows`, and never sees SQL or a driver type; the SQL
//! lives only in the backend that implements the traits ([`sqlite`] today, the file of
//! lite and standard). A second backend (PostgreSQL for the scale profile, issue 57)
//! implements the same traits and passes the same tests.
//!
//! Tables not yet behind the boundary (events, episodes, concepts, governance) are still
//! reached through `Ledger::read` / `Ledger::write` in their modules; they move here one
//! group at a time.

#[cfg(test)]
mod contract;
pub(crate) mod exec;
pub(crate) mod portable;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod sqlite;

use super::LedgerResult;

/// One synapse's stored weight and the time it was last updated (ms).
pub(crate) type Weight = (f64, i64);

/// A stored procedure: id, name, trigger text, trigger vector bytes, steps (JSON),
/// successes, failures.
pub(crate) type ProcedureRow = (u64, String, String, Vec<u8>, String, u64, u64);

/// A stored proposal: id, rule, title, rationale, metrics (JSON), status name.
pub(crate) type ProposalRow = (u64, String, String, String, String, String);

/// A pending association: id, episode id, suggestion, confidence, sources (JSON).
pub(crate) type AssociationRow = (u64, u64, String, f64, String);

/// Hebbian synapses between memories of a project (`a < b`).
pub(crate) trait SynapseRows {
    /// The synapse `a`–`b`'s stored weight, if it exists.
    fn synapse(&self, project: &str, a: u64, b: u64) -> LedgerResult<Option<Weight>>;
    /// Stores the synapse `a`–`b` (inserted, or updated in place when `exists`).
    fn put_synapse(
        &self,
        project: &str,
        pair: (u64, u64),
        weight: Weight,
        exists: bool,
    ) -> LedgerResult<()>;
    /// Every synapse touching `id`: the other memory and the stored weight.
    fn synapses_of(&self, project: &str, id: u64) -> LedgerResult<Vec<(u64, Weight)>>;
}

/// What recalls leave behind: the query log (gaps) and access counts (traces).
pub(crate) trait RecallLogRows {
    /// Whether the ledger holds anything of `project` (an event, a belief, an episode, a
    /// procedure, a prospective item).
    fn project_held(&self, project: &str) -> LedgerResult<bool>;
    /// Appends one recall to the query log.
    fn log_query(
        &self,
        project: &str,
        query: &str,
        best_and_gap: (f64, bool),
        hits_json: &str,
        at: i64,
    ) -> LedgerResult<()>;
    /// Counts an access of each memory of `ids` at `at` (a first access counts two:
    /// storage and this recall); an id given twice counts once. One statement per
    /// [`ACCESS_CHUNK`](portable::ACCESS_CHUNK) ids.
    fn count_accesses(&self, project: &str, ids: &[u64], at: i64) -> LedgerResult<()>;
    /// The logged gap queries, oldest first: query, time, best similarity, hits (JSON).
    fn gap_queries(&self, project: &str) -> LedgerResult<Vec<(String, i64, f64, String)>>;
    /// Open user questions, newest first: episode id, event id, content.
    fn open_questions(&self, project: &str, limit: usize) -> LedgerResult<Vec<(u64, u64, String)>>;
    /// The newest event id of `project` after `after` (or `after`'s floor, 0) and how many
    /// events follow `after`.
    fn events_after(&self, project: &str, after: i64) -> LedgerResult<(i64, u64)>;
}

/// Meta-memory: metrics and self-improvement proposals.
pub(crate) trait MetaRows {
    /// Appends a metric value.
    fn put_metric(
        &self,
        project: &str,
        metric: (&str, f64),
        window: &str,
        at: i64,
    ) -> LedgerResult<()>;
    /// The mean of the last `n` values of a metric (None without any).
    fn metric_mean(&self, project: &str, name: &str, n: usize) -> LedgerResult<Option<f64>>;
    /// The newest value of a metric (0 without any).
    fn latest_metric(&self, project: &str, name: &str) -> LedgerResult<f64>;
    /// The id of `rule`'s pending proposal, if any.
    fn pending_proposal(&self, project: &str, rule: &str) -> LedgerResult<Option<u64>>;
    /// Adds a pending proposal; its id.
    fn add_proposal(
        &self,
        project: &str,
        rule_title_rationale: (&str, &str, &str),
        metrics: &str,
        at: i64,
    ) -> LedgerResult<u64>;
    /// Every proposal of `project`, oldest first.
    fn proposals(&self, project: &str) -> LedgerResult<Vec<ProposalRow>>;
    /// Moves a proposal to `status`.
    fn set_proposal_status(
        &self,
        project: &str,
        id: u64,
        status: &str,
        at: i64,
    ) -> LedgerResult<()>;
}

/// Procedural memory.
pub(crate) trait ProcedureRows {
    /// Adds a procedure; its id.
    fn add_procedure(
        &self,
        project: &str,
        name_and_trigger: (&str, &str),
        vector: &[u8],
        steps_json: &str,
        at: i64,
    ) -> LedgerResult<u64>;
    /// Counts one outcome of a procedure; whether it exists.
    fn procedure_outcome(
        &self,
        project: &str,
        id: u64,
        success: bool,
        at: i64,
    ) -> LedgerResult<bool>;
    /// The procedures of `project` (only `id`, when given), oldest first.
    fn procedures(&self, project: &str, id: Option<u64>) -> LedgerResult<Vec<ProcedureRow>>;
}

/// Associations suggested between sealed episodes and concepts.
pub(crate) trait AssociationRows {
    /// Sealed episodes with a topic and no association yet, newest first.
    fn unassociated_episodes(&self, project: &str, limit: usize) -> LedgerResult<Vec<u64>>;
    /// Adds a candidate association; its id.
    fn add_association(
        &self,
        project: &str,
        episode: u64,
        suggestion: (&str, f64),
        sources_json: &str,
        at: i64,
    ) -> LedgerResult<u64>;
    /// Candidate associations, newest first.
    fn candidate_associations(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<AssociationRow>>;
}

/// What curation reads and marks: sealed episodes, loose events, concept summaries.
pub(crate) trait CurationRows {
    /// The belief the first operation of an applied plan touched.
    fn plan_belief(&self, project: &str, plan_key: &str) -> LedgerResult<Option<u64>>;
    /// Sealed episodes not yet curated, oldest first.
    fn uncurated_episodes(&self, project: &str, limit: usize) -> LedgerResult<Vec<u64>>;
    /// Marks an episode curated.
    fn mark_curated(&self, episode: u64) -> LedgerResult<()>;
    /// Events without an agent in no episode, after the project's curation mark, oldest
    /// first: id, role name, content.
    fn loose_events(&self, project: &str, limit: usize)
    -> LedgerResult<Vec<(u64, String, String)>>;
    /// Moves the project's curation mark to `after` (never back).
    fn move_curation_mark(&self, project: &str, after: u64) -> LedgerResult<()>;
    /// Concepts of at least two episodes without a proposed summary (the plan keyed
    /// `concept-<id>-summary`), oldest first: id, label.
    fn unsummarized_concepts(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<(u64, String)>>;
    /// The episodes supporting a concept, oldest first.
    fn concept_episodes(&self, concept: u64) -> LedgerResult<Vec<u64>>;
}

/// A memory's stored access statistics, joined to its event: project, id, stored at
/// (ms), importance, accesses, last access (ms) — the last three absent when never
/// persisted.
pub(crate) type TraceRow = (String, u64, i64, Option<f64>, Option<u64>, Option<i64>);

/// What opening and inspecting a memory reads of the events.
pub(crate) trait StoreRows {
    /// Every project that has events, in name order.
    fn event_projects(&self) -> LedgerResult<Vec<String>>;
    /// The ids of a project's events, in order.
    fn event_ids(&self, project: &str) -> LedgerResult<Vec<u64>>;
    /// Every event's access statistics, grouped by project.
    fn traces(&self) -> LedgerResult<Vec<TraceRow>>;
}

/// What a project map counts (`MapRows::census`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Census {
    /// Distinct threads of the events.
    Threads,
    /// Episodes.
    Episodes,
    /// Concepts.
    Concepts,
    /// Synapses.
    Synapses,
    /// Procedures.
    Procedures,
    /// Prospective items pending or deferred.
    OpenProspective,
}

/// A thread of a project map: name, events, first and last event time (ms).
pub(crate) type ThreadRow = (String, u64, (i64, i64));

/// An episode of a project map: id, agent, status, span of its events' times (ms; its own
/// times without events), event count.
pub(crate) type EpisodeRow = (u64, String, String, (i64, i64), u64);

/// What the project map (`Memory::map`) reads.
pub(crate) trait MapRows {
    /// How many of `what` the project holds.
    fn census(&self, project: &str, what: Census) -> LedgerResult<u64>;
    /// The first and last event times (ms), when there are events.
    fn event_span(&self, project: &str) -> LedgerResult<Option<(i64, i64)>>;
    /// Events per role, most first.
    fn role_counts(&self, project: &str) -> LedgerResult<Vec<(String, u64)>>;
    /// Beliefs per status, most first.
    fn belief_status_counts(&self, project: &str) -> LedgerResult<Vec<(String, u64)>>;
    /// The largest threads.
    fn largest_threads(&self, project: &str, limit: usize) -> LedgerResult<Vec<ThreadRow>>;
    /// The newest episodes.
    fn newest_episodes(&self, project: &str, limit: usize) -> LedgerResult<Vec<EpisodeRow>>;
    /// The best supported concepts: id, label, support.
    fn supported_concepts(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<(u64, String, u64)>>;
    /// The memories with the strongest synapses: id, degree, summed weight.
    fn synapse_hubs(&self, project: &str, limit: usize) -> LedgerResult<Vec<(u64, u64, f64)>>;
    /// The contents of an episode's first `limit` events, in order.
    fn episode_contents(
        &self,
        project: &str,
        episode: u64,
        limit: usize,
    ) -> LedgerResult<Vec<String>>;
}

/// A stored episode: agent, status, outcome, reward, previous and next episode of its
/// agent, episode vector and topic vector (bytes).
pub(crate) type EpisodeRecord = (
    String,
    String,
    Option<String>,
    Option<f64>,
    Option<u64>,
    Option<u64>,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
);

/// Episodic memory: episodes, the events they hold, and the open questions in them.
pub(crate) trait EpisodeRows {
    /// The agent's newest episode in `project`: id, status.
    fn last_episode(&self, project: &str, agent: &str) -> LedgerResult<Option<(u64, String)>>;
    /// The agent's newest open episode in `project`.
    fn open_episode(&self, project: &str, agent: &str) -> LedgerResult<Option<u64>>;
    /// Starts an open episode at `at`, chained after `prev` (whose `next` it becomes).
    fn start_episode(
        &self,
        project: &str,
        agent: &str,
        at: i64,
        prev: Option<u64>,
    ) -> LedgerResult<u64>;
    /// An episode's status and how many events it holds.
    fn episode_status(&self, project: &str, episode: u64) -> LedgerResult<Option<(String, u64)>>;
    /// A stored episode.
    fn episode_record(&self, project: &str, episode: u64) -> LedgerResult<Option<EpisodeRecord>>;
    /// An episode's events, in position order.
    fn episode_events(&self, episode: u64) -> LedgerResult<Vec<u64>>;
    /// An episode's event vectors (bytes) with their positions, in order.
    fn episode_vectors(&self, episode: u64) -> LedgerResult<Vec<(u64, Vec<u8>)>>;
    /// Where `event` stands in `episode`.
    fn position_in(&self, episode: u64, event: u64) -> LedgerResult<Option<u64>>;
    /// The project an event belongs to.
    fn event_project(&self, event: u64) -> LedgerResult<Option<String>>;
    /// An event's time (ms) and content.
    fn event_time_and_content(&self, event: u64) -> LedgerResult<Option<(i64, String)>>;
    /// Whether an event is the user's and ends in a question mark.
    fn event_asks(&self, event: u64) -> LedgerResult<Option<(bool, bool)>>;
    /// The time (ms) of the latest event an episode holds.
    fn last_event_time(&self, episode: u64) -> LedgerResult<Option<i64>>;
    /// Stores `event` (with its vector) at `position` of `episode`.
    fn add_episode_event(
        &self,
        project: &str,
        episode: u64,
        slot: (u64, u64),
        vector: &[u8],
    ) -> LedgerResult<()>;
    /// A user question at `position` of `episode` joins the open questions.
    fn add_open_question(&self, project: &str, episode: u64, slot: (u64, u64)) -> LedgerResult<()>;
    /// An answer at `position` closes the episode's earlier open questions.
    fn answer_open_questions(&self, episode: u64, position: u64) -> LedgerResult<()>;
    /// Sets an episode's status after an append; its idle clock moves to `at` when
    /// `touched`.
    fn episode_activity(
        &self,
        episode: u64,
        status: &str,
        at: i64,
        touched: bool,
    ) -> LedgerResult<()>;
    /// Sets an episode's status.
    fn set_episode_status(&self, project: &str, episode: u64, status: &str) -> LedgerResult<()>;
    /// Seals an episode at `at` with its outcome, reward and vectors (bytes).
    fn seal_episode(
        &self,
        episode: u64,
        at: i64,
        ending: (Option<&str>, Option<f64>),
        vectors: (Option<&[u8]>, Option<&[u8]>),
    ) -> LedgerResult<()>;
    /// A sealed episode's outcome and reward.
    fn episode_outcome(&self, episode: u64) -> LedgerResult<(Option<String>, Option<f64>)>;
    /// Records an outcome or reward an episode lacks (never replaces one).
    fn complete_outcome(
        &self,
        episode: u64,
        outcome: Option<&str>,
        reward: Option<f64>,
    ) -> LedgerResult<()>;
    /// Episodes not sealed whose last event is before `before`, oldest first: id, status,
    /// last event time.
    fn idle_episodes(
        &self,
        project: &str,
        before: i64,
        limit: usize,
    ) -> LedgerResult<Vec<(u64, String, i64)>>;
    /// The topic vectors (bytes) of the sealed episodes, oldest first.
    fn sealed_topics(&self, project: &str) -> LedgerResult<Vec<(u64, Vec<u8>)>>;
}

/// A sealed episode waiting for consolidation: id, topic (bytes), reward.
pub(crate) type PendingEpisode = (u64, Vec<u8>, Option<f64>);

/// A stored concept: id, label, prototype (bytes), successes, failures.
pub(crate) type ConceptRecord = (u64, String, Vec<u8>, u64, u64);

/// Semantic memory: concepts consolidated from sealed episodes.
pub(crate) trait ConceptRows {
    /// The newest sealed episodes.
    fn newest_sealed_episodes(&self, project: &str, limit: usize) -> LedgerResult<Vec<u64>>;
    /// How many sealed episodes the project holds.
    fn sealed_count(&self, project: &str) -> LedgerResult<u64>;
    /// Sealed episodes with a topic not yet consolidated, oldest first: id, topic (bytes),
    /// reward.
    fn unconsolidated_episodes(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<PendingEpisode>>;
    /// How many sealed episodes with a topic wait for consolidation.
    fn unconsolidated_count(&self, project: &str) -> LedgerResult<u64>;
    /// Concepts of one episode that none of the `after` episodes consolidated after
    /// theirs joined.
    fn lonely_concepts(&self, project: &str, after: usize) -> LedgerResult<Vec<u64>>;
    /// The concepts past the `keep` best supported (the newest first among equals).
    fn concepts_beyond(&self, project: &str, keep: usize) -> LedgerResult<Vec<u64>>;
    /// Deletes concepts and their support.
    fn delete_concepts(&self, concepts: &[u64]) -> LedgerResult<()>;
    /// The project's concept ids, oldest first.
    fn concept_ids(&self, project: &str) -> LedgerResult<Vec<u64>>;
    /// The episodes of a concept, in the table's order.
    fn concept_members(&self, concept: u64) -> LedgerResult<Vec<u64>>;
    /// A concept's vote counters (bytes).
    fn concept_counters(&self, concept: u64) -> LedgerResult<Option<Vec<u8>>>;
    /// Adds `episode` to `concept` with the concept's new counters and prototype (bytes)
    /// and the episode's outcome (successes, failures); the episode is consolidated.
    fn join_concept(
        &self,
        project: &str,
        ids: (u64, u64),
        vectors: (&[u8], &[u8]),
        outcome: (u64, u64),
        at: i64,
    ) -> LedgerResult<()>;
    /// Starts a concept of `episode` alone; its id. The episode is consolidated.
    fn new_concept(
        &self,
        project: &str,
        label_and_episode: (&str, u64),
        vectors: (&[u8], &[u8]),
        outcome: (u64, u64),
        at: i64,
    ) -> LedgerResult<u64>;
    /// Moves every episode of `from` into `into` (its new counters and prototype, its
    /// support, both outcomes summed) and deletes `from`.
    fn merge_concepts(
        &self,
        from_into: (u64, u64),
        vectors: (&[u8], &[u8]),
        support: u64,
        at: i64,
    ) -> LedgerResult<()>;
    /// Sets concepts' labels.
    fn label_concepts(&self, labels: &[(u64, String)]) -> LedgerResult<()>;
    /// Rebuilds a concept's counters and prototype (bytes).
    fn set_concept_vectors(&self, concept: u64, vectors: (&[u8], &[u8])) -> LedgerResult<()>;
    /// Whether each event of an episode is the user's, and its content, in order.
    fn episode_texts(&self, project: &str, episode: u64) -> LedgerResult<Vec<(bool, String)>>;
    /// The project's concept prototypes (bytes), oldest first.
    fn concept_prototypes(&self, project: &str) -> LedgerResult<Vec<(u64, Vec<u8>)>>;
    /// The project's concepts, oldest first.
    fn concept_records(&self, project: &str) -> LedgerResult<Vec<ConceptRecord>>;
}

/// A stored prospective item: id, project, kind, text, status, source event, due time
/// (ms), confirming event.
pub(crate) type ProspectiveRow = (
    u64,
    String,
    String,
    String,
    String,
    u64,
    Option<i64>,
    Option<u64>,
);

/// One recorded transition of a prospective item: time (ms), operation, status before
/// and after, the event it cites, the due time after.
pub(crate) type ProspectiveChangeRow = (
    i64,
    String,
    Option<String>,
    String,
    Option<u64>,
    Option<i64>,
);

/// A transition to record ([`ProspectiveRows::record_prospective`]).
pub(crate) struct Transition<'a> {
    /// The item.
    pub item: u64,
    /// When (ms).
    pub at: i64,
    /// The operation (`propose`, `confirm`, …).
    pub op: &'a str,
    /// The status before (none for a new item).
    pub from: Option<&'a str>,
    /// The status after.
    pub to: &'a str,
    /// The event it cites.
    pub event: Option<u64>,
    /// The due time after (ms).
    pub due_at: Option<i64>,
}

/// Prospective memory: items and their history.
pub(crate) trait ProspectiveRows {
    /// The items of one kind a source event created, oldest first.
    fn items_from(
        &self,
        project: &str,
        source_event: u64,
        kind: &str,
    ) -> LedgerResult<Vec<ProspectiveRow>>;
    /// Adds a pending item; its id.
    fn add_prospective(
        &self,
        project: &str,
        kind_and_text: (&str, &str),
        source_event: u64,
        due_at: Option<i64>,
        at: i64,
    ) -> LedgerResult<u64>;
    /// One item.
    fn prospective_item(&self, project: &str, id: u64) -> LedgerResult<Option<ProspectiveRow>>;
    /// An item's transitions, oldest first.
    fn prospective_changes(
        &self,
        project: &str,
        id: u64,
    ) -> LedgerResult<Vec<ProspectiveChangeRow>>;
    /// Records a transition of an item.
    fn record_prospective(&self, project: &str, change: &Transition<'_>) -> LedgerResult<()>;
    /// The item an event confirmed, if any.
    fn confirmed_by(&self, event: u64) -> LedgerResult<Option<u64>>;
    /// Confirms an item by `event`.
    fn confirm_prospective(&self, project: &str, id: u64, event: u64, at: i64) -> LedgerResult<()>;
    /// Sets an item's status and due time.
    fn set_prospective(
        &self,
        project: &str,
        id: u64,
        status_and_due: (&str, Option<i64>),
        at: i64,
    ) -> LedgerResult<()>;
    /// Confirmed (or confirmed, then deferred) items due by `at`, earliest first.
    fn due_prospective(&self, project: &str, at: i64) -> LedgerResult<Vec<ProspectiveRow>>;
    /// Expires pending items whose due time passed before `at` (recording each); how many.
    fn expire_prospective(&self, project: &str, at: i64) -> LedgerResult<usize>;
}

/// Everything behind the boundary: what `reading` and `writing` hand to their closure.
/// Each backend implements every part, then this.
pub(crate) trait Rows:
    SynapseRows
    + RecallLogRows
    + MetaRows
    + ProcedureRows
    + AssociationRows
    + CurationRows
    + StoreRows
    + MapRows
    + EpisodeRows
    + ConceptRows
    + ProspectiveRows
{
}
