//! The rest of the agent-facing API (DESIGN.md, "Agent-facing API") on the `Memory`
//! facade: events, episodes, beliefs, procedures, meta-memory, pulse and stats. Each call
//! goes to the layer that owns the data; where a layer needs a vector, the facade supplies
//! it (the stored vector of an event, or the profile's text encoding).

use crate::cognition::{
    AppendOutcome, Association, EpisodeId, Gap, PhaseReceipt, Procedure, ProcedureId, Proposal,
    PulseReceipt, Step, Suggestion,
};
use crate::governance::{Belief, Op, Ownership, Plan, PlanOutcome};
use crate::ledger::{Event, EventId, LedgerError, NewEvent};
use crate::store::{ProjectId, VectorId};
use crate::{Memory, Result};

/// Per-project counts of [`Memory::stats`].
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ProjectStats {
    /// The project.
    pub project: String,
    /// Raw events in the ledger.
    pub events: u64,
    /// Vectors in the vector store.
    pub vectors: usize,
    /// Where they live: hot copies, warm and cold homes (the warm tier is Redis on the
    /// standard profile).
    pub tiers: crate::TierCensus,
    /// Active beliefs.
    pub active_beliefs: usize,
    /// Standing directives recall keeps apart.
    pub directives: usize,
    /// Events waiting for the sentence model's background embedder (0 without one).
    pub embedding_backlog: u64,
}

impl Memory {
    /// Records one event (see [`observe_batch`](Self::observe_batch)) and returns it as
    /// stored: id, thread position, links.
    ///
    /// # Errors
    /// As [`observe_batch`](Self::observe_batch).
    pub fn record_event(&self, event: NewEvent) -> Result<Event> {
        let project = event.project.clone();
        let id = self.observe(event)?;
        self.ledger()
            .get(&project, id)?
            .ok_or_else(|| LedgerError::UnknownEvent(id).into())
    }

    /// Opens an episode for `agent` (an open one of the agent is soft-sealed first).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn start_episode(&self, project: &ProjectId, agent: &str) -> Result<EpisodeId> {
        Ok(self.cognition.start_episode(project, agent)?)
    }

    /// Appends the observed event `event` to `episode`, with the vector stored for it: an
    /// explicit append is the caller's decision, so there is no topic-shift test (a
    /// soft-sealed episode reopens). [`AppendOutcome::Appended`], or
    /// [`AppendOutcome::AlreadyIn`] for an event the episode holds already.
    ///
    /// # Errors
    /// `unknown_event` (or it has no vector; an event of another project is unknown too),
    /// `not_found` (the episode), `episode_sealed`.
    pub fn append_event(
        &self,
        project: &ProjectId,
        episode: EpisodeId,
        event: EventId,
    ) -> Result<AppendOutcome> {
        self.cognition.check_event(project, event)?;
        let vector = self
            .tiers
            .get(project, VectorId(event.0))?
            .ok_or(LedgerError::UnknownEvent(event))?;
        Ok(self
            .cognition
            .append_explicit(project, episode, event, &vector)?)
    }

    /// Appends observed events to `episode` in order, as [`append_event`](Self::append_event)
    /// does one (no topic-shift test), in one transaction; events it holds are skipped.
    ///
    /// # Errors
    /// As [`append_event`](Self::append_event).
    pub fn append_events(
        &self,
        project: &ProjectId,
        episode: EpisodeId,
        events: &[EventId],
    ) -> Result<usize> {
        let mut vectors = Vec::with_capacity(events.len());
        for &event in events {
            self.cognition.check_event(project, event)?;
            vectors.push(
                self.tiers
                    .get(project, VectorId(event.0))?
                    .ok_or(LedgerError::UnknownEvent(event))?,
            );
        }
        let batch: Vec<(EventId, &hdv::Hypervector)> =
            events.iter().copied().zip(&vectors).collect();
        Ok(self
            .cognition
            .append_batch_explicit(project, episode, &batch)?
            .len())
    }

    /// Seals `episode` with its outcome and reward.
    ///
    /// # Errors
    /// Episode errors (unknown, already sealed).
    pub fn end_episode(
        &self,
        project: &ProjectId,
        episode: EpisodeId,
        outcome: Option<&str>,
        reward: Option<f64>,
    ) -> Result<()> {
        Ok(self
            .cognition
            .end_episode(project, episode, outcome, reward)?)
    }

    /// Applies a governance plan (all operations and their audit rows in one transaction;
    /// a rejected plan writes nothing and names its reason).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn apply_plan(&self, plan: &Plan) -> Result<PlanOutcome> {
        self.writable()?;
        Ok(self.ledger().apply_plan(plan)?)
    }

    /// Proposes a belief backed by `evidence` (a one-operation plan: `Assert`). A
    /// user-owned belief needs user evidence; a different statement while one is active is
    /// recorded as a possible conflict.
    ///
    /// # Errors
    /// SQLite errors (rejections are outcomes, not errors).
    pub fn propose(
        &self,
        project: &ProjectId,
        key: &str,
        statement: &str,
        ownership: Ownership,
        evidence: &[EventId],
        idempotency_key: &str,
    ) -> Result<PlanOutcome> {
        self.apply_plan(&Plan::single(
            project.clone(),
            idempotency_key,
            Op::Assert {
                key: key.to_owned(),
                statement: statement.to_owned(),
                ownership,
                agent: None,
                confidence: 1.0,
                evidence: evidence.to_vec(),
            },
        ))
    }

    /// Corrects the active belief of `key` (it is superseded, its window closed, both
    /// linked); `expected_version` guards against a concurrent change.
    ///
    /// # Errors
    /// SQLite errors (rejections are outcomes, not errors).
    pub fn correct(
        &self,
        project: &ProjectId,
        key: &str,
        statement: &str,
        evidence: &[EventId],
        expected_version: Option<u64>,
        idempotency_key: &str,
    ) -> Result<PlanOutcome> {
        self.apply_plan(&Plan::single(
            project.clone(),
            idempotency_key,
            Op::Correct {
                key: key.to_owned(),
                statement: statement.to_owned(),
                evidence: evidence.to_vec(),
                expected_version,
                confidence: 1.0,
            },
        ))
    }

    /// The active belief of `key` (never a superseded one).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn current(&self, project: &ProjectId, key: &str) -> Result<Option<Belief>> {
        self.require_project(project)?;
        Ok(self.ledger().current_belief(project, key)?)
    }

    /// The version of `key` valid at `at` (ms).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn belief_at(&self, project: &ProjectId, key: &str, at: i64) -> Result<Option<Belief>> {
        self.require_project(project)?;
        Ok(self.ledger().belief_at(project, key, at)?)
    }

    /// Every version of `key`, oldest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn belief_history(&self, project: &ProjectId, key: &str) -> Result<Vec<Belief>> {
        self.require_project(project)?;
        Ok(self.ledger().belief_history(project, key)?)
    }

    /// Adds a procedure whose `trigger` text is encoded for matching.
    ///
    /// # Errors
    /// A trigger without words; SQLite errors.
    pub fn add_procedure(
        &self,
        project: &ProjectId,
        name: &str,
        trigger: &str,
        steps: &[Step],
    ) -> Result<ProcedureId> {
        let v = self.encode(trigger).ok_or(LedgerError::Invalid {
            what: "trigger",
            reason: "has no words to encode".to_owned(),
        })?;
        Ok(self
            .cognition
            .add_procedure(project, name, trigger, &v, steps)?)
    }

    /// The `k` procedures whose trigger best matches `query`, weighted by reliability.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn suggest_procedures(
        &self,
        project: &ProjectId,
        query: &str,
        k: usize,
    ) -> Result<Vec<Suggestion>> {
        self.require_project(project)?;
        match self.encode(query) {
            Some(v) => Ok(self.cognition.suggest_procedures(project, &v, k)?),
            None => Ok(Vec::new()),
        }
    }

    /// Records a success or failure of a procedure (its reliability is the Beta posterior).
    ///
    /// # Errors
    /// Unknown procedure; SQLite errors.
    pub fn record_procedure_outcome(
        &self,
        project: &ProjectId,
        id: ProcedureId,
        success: bool,
    ) -> Result<Procedure> {
        Ok(self
            .cognition
            .record_procedure_outcome(project, id, success)?)
    }

    /// Knowledge gaps: weak recalls, unanswered questions, failing concepts.
    ///
    /// # Errors
    /// `unknown_project`; SQLite errors.
    pub fn knowledge_gaps(&self, project: &ProjectId, limit: usize) -> Result<Vec<Gap>> {
        self.require_project(project)?;
        Ok(self.cognition().knowledge_gaps(project, limit)?)
    }

    /// Candidate associations found by pulse ticks.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn associations(&self, project: &ProjectId, limit: usize) -> Result<Vec<Association>> {
        self.require_project(project)?;
        Ok(self.cognition().associations(project, limit)?)
    }

    /// Self-improvement proposals.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn proposals(&self, project: &ProjectId) -> Result<Vec<Proposal>> {
        self.require_project(project)?;
        Ok(self.cognition().proposals(project)?)
    }

    /// One bounded pulse tick over `project` with the profile's budgets: the cognitive
    /// phases, then tier placement by LTP strength (at most `items_per_phase` moves).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn pulse_tick(&self, project: &ProjectId) -> Result<PulseReceipt> {
        self.writable()?;
        self.require_project(project)?;
        self.recover_warm()?;
        let budget = self.profile.pulse.budget;
        let mut receipt = self.cognition().tick(project, budget)?;
        // A sentence model's queue, bounded like every phase (a server's background
        // embedder usually leaves nothing here; a command-line user's pulse does the work).
        if self.embedder.deferred() {
            let t = std::time::Instant::now();
            let done = self.embed_pending(
                Some(project),
                budget.items_per_phase,
                Some(t + budget.time_per_phase),
            )?;
            let elapsed_ms = t.elapsed().as_secs_f64() * 1e3;
            receipt.elapsed_ms += elapsed_ms;
            receipt.phases.push(PhaseReceipt {
                phase: crate::cognition::Phase::Embed,
                items: done.embedded,
                elapsed_ms,
                produced: format!(
                    "{} events embedded by the sentence model; {} still queued",
                    done.embedded, done.left
                ),
                budget_exhausted: done.left > 0,
            });
        }
        // Tier placement by LTP strength, bounded like every phase.
        let t = std::time::Instant::now();
        let r = self.tiers.rebalance_bounded(
            project,
            budget.items_per_phase,
            Some(t + budget.time_per_phase),
        )?;
        // The hot tier is this process's RAM copy: filling it on the first tick of a
        // process is reported apart and not counted as moves.
        let first = crate::sync::Recover::locked(&self.ticked).insert(project.clone());
        let hot_moves = r.promoted + r.demoted_from_hot;
        let durable = r.demoted_to_cold + r.rehomed_to_warm;
        let moves = durable + if first { 0 } else { hot_moves };
        let elapsed_ms = t.elapsed().as_secs_f64() * 1e3;
        receipt.elapsed_ms += elapsed_ms;
        let hot = if first {
            format!("this process's hot tier filled with {}", r.promoted)
        } else if hot_moves == 0 {
            "hot tier unchanged since this process's last tick".to_owned()
        } else {
            format!(
                "{} copied into this process's hot tier, {} dropped from it",
                r.promoted, r.demoted_from_hot
            )
        };
        receipt.phases.push(PhaseReceipt {
            phase: crate::cognition::Phase::Tiers,
            items: moves,
            elapsed_ms,
            produced: format!(
                "{hot}; {} moved to cold, {} back to warm; {} left for the next tick",
                r.demoted_to_cold, r.rehomed_to_warm, r.left
            ),
            budget_exhausted: r.left > 0,
        });
        Ok(receipt)
    }

    /// Counts per project (every project of the ledger or the vector store).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn stats(&self) -> Result<Vec<ProjectStats>> {
        let mut projects = self.ledger().reading(|rows| rows.event_projects())?;
        for tier in [self.warm.as_ref(), self.cold.as_ref()] {
            projects.extend(tier.projects().iter().map(|p| p.as_str().to_owned()));
        }
        projects.sort_unstable();
        projects.dedup();
        let mut out = Vec::with_capacity(projects.len());
        for name in projects {
            let project = ProjectId::new(name.clone())?;
            let (hot, warm, cold) = self.tiers.census(&project);
            out.push(ProjectStats {
                events: self.ledger().count(&project)?,
                vectors: self.tiers.len(&project),
                tiers: crate::TierCensus { hot, warm, cold },
                active_beliefs: self
                    .ledger()
                    .beliefs_with_status(&project, crate::governance::BeliefStatus::Active)?
                    .len(),
                directives: self.directive_count(&project)?,
                embedding_backlog: self.ledger().semantic_backlog(&project)?,
                project: name,
            });
        }
        Ok(out)
    }

    /// Whether this memory holds anything of `project`: an event, a vector, a belief, an
    /// episode, a procedure or a prospective item.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn holds(&self, project: &ProjectId) -> Result<bool> {
        if !self.tiers.is_empty(project) {
            return Ok(true);
        }
        let p = project.as_str();
        Ok(self.ledger().reading(|rows| rows.project_held(p))?)
    }

    /// Refuses a read of a project this memory does not hold (`unknown_project`, naming
    /// the projects it does hold): a read never creates rows for it (no query log, no
    /// gap, no trace), so an erased project stays erased.
    ///
    /// # Errors
    /// [`LedgerError::UnknownProject`]; SQLite errors.
    pub fn require_project(&self, project: &ProjectId) -> Result<()> {
        if self.holds(project)? {
            return Ok(());
        }
        Err(LedgerError::UnknownProject {
            project: project.to_string(),
        }
        .into())
    }
}
