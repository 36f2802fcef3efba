//! The consolidation ("dream") curator: a deterministic pass that proposes candidate
//! beliefs — preferences, decisions, boundaries, corrections, standing instructions, limits
//! and lasting facts, recognised by how they are said ([`crate::text::statements`]) — each
//! citing the exact raw event it was read from, over sealed episodes and over the events
//! that belong to no episode (observed without an agent: read in id order past the
//! project's `curation_mark`); and one summary per concept citing events of its episodes.
//! An event is proposed once, whichever pass reads it (its idempotency key is its own).
//! Candidates enter the governance queue as `candidate` rows; promotion is a separate,
//! governed step.

use super::{Cognition, EpisodeId, is_filler};
use crate::base::ProjectId;
use crate::governance::{BeliefId, Op, OpOutcome, Ownership, Plan, PlanOutcome, RejectionReason};
use crate::ledger::{EventId, LedgerError, LedgerResult, Role};
use crate::text::statements::Stated;

/// Why a candidate was refused.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
pub enum CandidateRefusal {
    /// Only `propose` operations are candidates.
    #[error("a candidate must be a propose operation")]
    NotAProposal,
    /// The candidate cites no event.
    #[error("a candidate must cite at least one raw event id")]
    NoEvidence,
    /// The candidate cites an event that is not part of its episode.
    #[error("event {0} is not part of the episode")]
    EvidenceOutsideEpisode(EventId),
    /// Governance refused it.
    #[error("governance refused the candidate: {0}")]
    Governance(RejectionReason),
}

/// What the curator proposed for one episode.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Curated {
    /// The episode.
    pub episode: EpisodeId,
    /// Candidate beliefs created.
    pub candidates: Vec<BeliefId>,
}

/// The key prefix and owner of a candidate of each kind a user states
/// ([`crate::text::statements`]).
fn key_of(kind: Stated) -> (&'static str, Ownership) {
    match kind {
        Stated::Preference => ("user.preference", Ownership::User),
        Stated::Decision => ("project.decision", Ownership::Project),
        Stated::Boundary => ("user.boundary", Ownership::User),
        Stated::Correction => ("user.correction", Ownership::User),
        Stated::Instruction => ("user.instruction", Ownership::User),
        Stated::Constraint => ("user.constraint", Ownership::User),
        Stated::Fact => ("user.fact", Ownership::User),
    }
}

fn slug(text: &str) -> String {
    let words: Vec<String> = crate::text::tokens(text)
        .into_iter()
        .filter(|w| w.chars().count() > 2)
        .take(4)
        .collect();
    if words.is_empty() {
        "item".to_owned()
    } else {
        words.join("_")
    }
}

impl Cognition {
    /// Submits one candidate for `episode`: it must be a `propose` whose evidence is a
    /// non-empty subset of the episode's events; then governance validates it as usual.
    ///
    /// # Errors
    /// Unknown episode, SQLite errors. Refusals are `Ok(Err(..))`.
    pub fn submit_candidate(
        &self,
        project: &ProjectId,
        episode: EpisodeId,
        idempotency_key: &str,
        op: Op,
    ) -> LedgerResult<Result<BeliefId, CandidateRefusal>> {
        let Op::Propose { evidence, .. } = &op else {
            return Ok(Err(CandidateRefusal::NotAProposal));
        };
        if evidence.is_empty() {
            return Ok(Err(CandidateRefusal::NoEvidence));
        }
        let events = self.episode(project, episode)?.events;
        if let Some(outside) = evidence.iter().find(|e| !events.contains(e)) {
            return Ok(Err(CandidateRefusal::EvidenceOutsideEpisode(*outside)));
        }
        self.apply_candidate(project, idempotency_key, op)
    }

    /// Applies a `propose` as a one-operation plan: the candidate it made, or the one an
    /// earlier call under the same idempotency key made.
    fn apply_candidate(
        &self,
        project: &ProjectId,
        idempotency_key: &str,
        op: Op,
    ) -> LedgerResult<Result<BeliefId, CandidateRefusal>> {
        match self
            .ledger
            .apply_plan(&Plan::single(project.clone(), idempotency_key, op))?
        {
            PlanOutcome::Applied { results } => match results.first() {
                Some(OpOutcome::Proposed { belief }) => Ok(Ok(*belief)),
                other => unreachable!("a propose yields Proposed, got {other:?}"),
            },
            PlanOutcome::AlreadyApplied { .. } => {
                let id = self
                    .ledger
                    .reading(|rows| rows.plan_belief(project.as_str(), idempotency_key))?
                    .ok_or_else(|| LedgerError::Corrupt {
                        what: "governance audit",
                        detail: format!("the applied plan {idempotency_key:?} has no audit row"),
                    })?;
                Ok(Ok(BeliefId(id)))
            }
            PlanOutcome::Rejected(r) => Ok(Err(CandidateRefusal::Governance(r.reason))),
        }
    }

    /// The candidate one event states, if its reader finds one
    /// ([`crate::text::statements::candidate`]): a `propose` citing the event alone (of
    /// the episode it was read from, when it was), under an idempotency key of the
    /// event's own, so an event read twice is proposed once.
    fn read_candidate(
        &self,
        project: &ProjectId,
        event: EventId,
        role: Role,
        content: &str,
    ) -> LedgerResult<Option<BeliefId>> {
        let by_assistant = match role {
            Role::User => false,
            Role::Assistant => true,
            Role::Tool | Role::System => return Ok(None),
        };
        let Some(kind) = crate::text::statements::candidate(content, by_assistant) else {
            return Ok(None);
        };
        let (prefix, ownership) = key_of(kind);
        let op = Op::Propose {
            key: format!("{prefix}.{}", slug(content)),
            statement: content.trim().to_owned(),
            ownership,
            agent: None,
            confidence: 0.6,
            evidence: vec![event],
        };
        Ok(self
            .apply_candidate(project, &format!("curator-ev{}", event.0), op)?
            .ok())
    }

    /// Curates up to `budget` sealed, not yet curated episodes (see the module docs).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn curate(&self, project: &ProjectId, budget: usize) -> LedgerResult<Vec<Curated>> {
        let pending = self
            .ledger
            .reading(|rows| rows.uncurated_episodes(project.as_str(), budget))?;
        let mut out = Vec::new();
        for id in pending {
            let episode = EpisodeId(id);
            let mut candidates = Vec::new();
            for e in self.episode(project, episode)?.events {
                if let Some(ev) = self.ledger.get(project, e)?
                    && let Some(b) = self.read_candidate(project, ev.id, ev.role, &ev.content)?
                {
                    candidates.push(b);
                }
            }
            self.ledger.writing(|rows| rows.mark_curated(id))?;
            out.push(Curated {
                episode,
                candidates,
            });
        }
        Ok(out)
    }

    /// Curates up to `budget` events that belong to no episode (observed without an agent),
    /// in id order after the project's curation mark, which then moves past them: the same
    /// reader as for a sealed episode's events. Returns how many events were read and the
    /// candidates made.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn curate_loose(
        &self,
        project: &ProjectId,
        budget: usize,
    ) -> LedgerResult<(usize, Vec<BeliefId>)> {
        let rows = self
            .ledger
            .reading(|rows| rows.loose_events(project.as_str(), budget))?;
        let Some(last) = rows.last().map(|r| r.0) else {
            return Ok((0, Vec::new()));
        };
        let mut candidates = Vec::new();
        for (id, role, content) in &rows {
            let event = EventId(*id);
            if let Some(b) = self.read_candidate(project, event, Role::parse(role)?, content)? {
                candidates.push(b);
            }
        }
        self.ledger
            .writing(|rows| rows.move_curation_mark(project.as_str(), last))?;
        Ok((rows.len(), candidates))
    }
}

/// The first sentence of `text`, trimmed.
fn first_sentence(text: &str) -> &str {
    text.split(['.', '\n']).next().unwrap_or("").trim()
}

impl Cognition {
    /// Proposes one summary candidate per concept of at least two episodes that has none
    /// yet (up to `budget` concepts): its label, then the first sentence of up to three
    /// user events from different episodes of it, citing those events. A concept's summary
    /// is proposed once (idempotency key `concept-<id>-summary`); the episodes it
    /// consolidates add support to it, not more candidates. Returns the candidates.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn propose_concept_summaries(
        &self,
        project: &ProjectId,
        budget: usize,
    ) -> LedgerResult<Vec<BeliefId>> {
        self.propose_concept_summaries_until(project, budget, None)
    }

    /// [`propose_concept_summaries`](Self::propose_concept_summaries), stopping before the
    /// next concept once `deadline` has passed.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn propose_concept_summaries_until(
        &self,
        project: &ProjectId,
        budget: usize,
        deadline: Option<std::time::Instant>,
    ) -> LedgerResult<Vec<BeliefId>> {
        let pending = self
            .ledger
            .reading(|rows| rows.unsummarized_concepts(project.as_str(), budget))?;
        let mut out = Vec::new();
        for (concept, label) in pending {
            if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                break;
            }
            let episodes = self.ledger.reading(|rows| rows.concept_episodes(concept))?;
            let mut cited = Vec::new();
            for ep in episodes {
                if cited.len() == 3 {
                    break;
                }
                for e in self.episode(project, EpisodeId(ep))?.events {
                    if let Some(ev) = self.ledger.get(project, e)?
                        && ev.role == Role::User
                        && !is_filler(&ev.content)
                        && !first_sentence(&ev.content).is_empty()
                    {
                        cited.push(ev);
                        break;
                    }
                }
            }
            if cited.is_empty() {
                continue;
            }
            let statement = format!(
                "{label}: {}",
                cited
                    .iter()
                    .map(|e| first_sentence(&e.content))
                    .collect::<Vec<_>>()
                    .join("; ")
            );
            let op = Op::Propose {
                key: format!("concept.{concept}.summary"),
                statement,
                ownership: Ownership::Project,
                agent: None,
                confidence: 0.5,
                evidence: cited.iter().map(|e| e.id).collect(),
            };
            let key = format!("concept-{concept}-summary");
            if let PlanOutcome::Applied { results } =
                self.ledger
                    .apply_plan(&Plan::single(project.clone(), &key, op))?
                && let Some(OpOutcome::Proposed { belief }) = results.first()
            {
                out.push(*belief);
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filler_is_skipped() {
        for filler in ["ok", "thanks!", "Sounds good", "yes please"] {
            assert!(is_filler(filler), "{filler}");
        }
        assert!(!is_filler("I prefer tabs over spaces in Rust"));
    }
}
