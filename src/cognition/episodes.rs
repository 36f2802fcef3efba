//! Episodes (open → soft-sealed → sealed, chained per agent, vector = bundle of
//! position-permuted event vectors). Concepts, consolidated from sealed episodes, are in
//! [`super::concepts`].

use crate::sync::Recover as _;
use std::sync::Arc;

use hdv::{Bundler, Hypervector, Scan};

use super::{Cognition, similarity};
use crate::base::ProjectId;
use crate::ledger::{EventId, LedgerError, LedgerResult};

/// The range of an episode's reward: -1 a failure, 1 a success, 0 neither (its sign
/// counts a concept's successes and failures).
pub const REWARDS: std::ops::RangeInclusive<f64> = -1.0..=1.0;

crate::ledger::string_enum!(
    /// Lifecycle of an episode.
    EpisodeStatus {
        /// Receiving events.
        Open = "open",
        /// Paused by idleness or a topic shift; an on-topic event reopens it.
        SoftSealed = "soft_sealed",
        /// Final: never reopened.
        Sealed = "sealed",
    }
);

crate::base::number_id!(
    /// Identifier of an episode.
    EpisodeId
);

/// An episode.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Episode {
    /// Id.
    pub id: EpisodeId,
    /// Agent.
    pub agent: String,
    /// Status.
    pub status: EpisodeStatus,
    /// Events in order.
    pub events: Vec<EventId>,
    /// Outcome text, once ended.
    pub outcome: Option<String>,
    /// Reward, once ended.
    pub reward: Option<f64>,
    /// Previous episode of the agent.
    pub prev: Option<EpisodeId>,
    /// Next episode of the agent.
    pub next: Option<EpisodeId>,
    /// The binarized episode vector (sealed episodes).
    #[serde(skip)]
    pub vector: Option<Hypervector>,
    /// The binarized topic vector (sealed episodes).
    #[serde(skip)]
    pub topic: Option<Hypervector>,
}

/// What happened to an appended event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppendOutcome {
    /// Appended at this position.
    Appended(usize),
    /// Already in the episode at this position (appended by segmentation or an earlier
    /// call): nothing changed.
    AlreadyIn(usize),
    /// The event is off-topic for the episode: it was not appended and the episode is now
    /// soft-sealed; start a new episode for it.
    TopicShift,
}

pub(super) fn invalid(what: &'static str, reason: impl Into<String>) -> LedgerError {
    LedgerError::Invalid {
        what,
        reason: reason.into(),
    }
}

impl Cognition {
    /// Starts an episode for `agent`; the agent's previous open episode is sealed and both
    /// are chained (prev/next).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn start_episode(&self, project: &ProjectId, agent: &str) -> LedgerResult<EpisodeId> {
        let previous = self
            .ledger
            .reading(|rows| rows.last_episode(project.as_str(), agent))?;
        if let Some((id, status)) = &previous
            && status != "sealed"
        {
            self.end_episode(project, EpisodeId(*id), None, None)?;
        }
        let now = self.ledger.now_ms();
        let prev = previous.map(|p| p.0);
        let id = self
            .ledger
            .writing(|rows| rows.start_episode(project.as_str(), agent, now, prev))?;
        Ok(EpisodeId(id))
    }

    fn episode_row(
        &self,
        project: &ProjectId,
        id: EpisodeId,
    ) -> LedgerResult<(EpisodeStatus, usize)> {
        let row = self
            .ledger
            .reading(|rows| rows.episode_status(project.as_str(), id.0))?;
        let Some((status, n)) = row else {
            return Err(self.missing_episode(project, id)?);
        };
        Ok((EpisodeStatus::parse(&status)?, n as usize))
    }

    /// `id` is not an episode of the project (`not_found`): another project's episode is
    /// answered as one that does not exist, so a project learns nothing of another's ids.
    fn missing_episode(&self, _: &ProjectId, id: EpisodeId) -> LedgerResult<LedgerError> {
        Ok(LedgerError::NotFound {
            what: "episode",
            id: id.0,
        })
    }

    /// The running counters of an episode: the positional bundle (the episode vector) and
    /// the position-free topic bundle (what the events are about), rebuilt from the stored
    /// event vectors when not cached.
    fn episode_bundles(&self, id: EpisodeId) -> LedgerResult<(Bundler, Bundler)> {
        if let Some(b) = self.open.locked().get(&id) {
            return Ok(b.clone());
        }
        let blobs = self.ledger.reading(|rows| rows.episode_vectors(id.0))?;
        let (mut positional, mut topic) = (Bundler::new(self.dim), Bundler::new(self.dim));
        for (pos, blob) in blobs {
            let v = self.decode(&blob)?;
            positional.add(&v.permute(pos as usize));
            topic.add(&v);
        }
        Ok((positional, topic))
    }

    /// Offers an event (with its vector) to an open or soft-sealed episode, as automatic
    /// segmentation does. A sealed episode is never reopened. After `topic_min_events`
    /// events, an event whose similarity to the episode falls below
    /// `topic_shift_similarity` is a topic shift: the episode is soft-sealed and the event
    /// is not appended. An event already in the episode is not appended again.
    ///
    /// # Errors
    /// Unknown episode or event, cross-project event, wrong dimension, sealed episode.
    pub fn append_to_episode(
        &self,
        project: &ProjectId,
        id: EpisodeId,
        event: EventId,
        vector: &Hypervector,
    ) -> LedgerResult<AppendOutcome> {
        self.check_dim(vector)?;
        self.check_event(project, event)?;
        Ok(
            match self.append_events(project, id, &[(event, vector)], false)?[..] {
                [position] => AppendOutcome::Appended(position),
                _ => AppendOutcome::TopicShift,
            },
        )
    }

    /// Appends an event the caller chose explicitly: no topic-shift test (the caller
    /// decided; a soft-sealed episode reopens). An event the episode holds already (appended
    /// by segmentation while its agent's episode was open, or by an earlier call) is
    /// [`AppendOutcome::AlreadyIn`] at its position, so a script's start → event → end
    /// works whether or not the observe joined the episode first.
    ///
    /// # Errors
    /// `not_found` / `unknown_event` (the episode or event is not the project's),
    /// `episode_sealed`, wrong dimension.
    pub fn append_explicit(
        &self,
        project: &ProjectId,
        id: EpisodeId,
        event: EventId,
        vector: &Hypervector,
    ) -> LedgerResult<AppendOutcome> {
        self.check_dim(vector)?;
        self.check_event(project, event)?;
        self.episode_row(project, id)?;
        if let Some(position) = self.position_in(id, event)? {
            return Ok(AppendOutcome::AlreadyIn(position));
        }
        let positions = self.append_events(project, id, &[(event, vector)], true)?;
        Ok(AppendOutcome::Appended(positions[0]))
    }

    /// Where `event` stands in episode `id`, if the episode holds it (one indexed lookup).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn position_in(&self, id: EpisodeId, event: EventId) -> LedgerResult<Option<usize>> {
        let position = self
            .ledger
            .reading(|rows| rows.position_in(id.0, event.0))?;
        Ok(position.map(|p| p as usize))
    }

    /// The event exists and is of `project`.
    pub(crate) fn check_event(&self, project: &ProjectId, event: EventId) -> LedgerResult<()> {
        let owner = self.ledger.reading(|rows| rows.event_project(event.0))?;
        // An event of another project is answered as one that does not exist.
        if owner.as_deref() == Some(project.as_str()) {
            Ok(())
        } else {
            Err(LedgerError::UnknownEvent(event))
        }
    }

    /// The agent's open episode in `project`, if any (soft-sealed and sealed ones are
    /// not open).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn open_episode(
        &self,
        project: &ProjectId,
        agent: &str,
    ) -> LedgerResult<Option<EpisodeId>> {
        Ok(self
            .ledger
            .reading(|rows| rows.open_episode(project.as_str(), agent))?
            .map(EpisodeId))
    }

    /// Appends events (already checked to be of `project`) with their vectors to an open
    /// or soft-sealed episode in one transaction, in order, stopping at the first topic
    /// shift (the episode is then soft-sealed, as with
    /// [`append_to_episode`](Self::append_to_episode)). Returns the positions the appended
    /// events took.
    ///
    /// # Errors
    /// Unknown or sealed episode, wrong dimension, SQLite errors (nothing appended then).
    pub fn append_batch_to_episode(
        &self,
        project: &ProjectId,
        id: EpisodeId,
        events: &[(EventId, &Hypervector)],
    ) -> LedgerResult<Vec<usize>> {
        self.append_events(project, id, events, false)
    }

    /// Appends events (already checked to be of `project`) the caller chose explicitly, in
    /// order, in one transaction: no topic-shift or idle test (as
    /// [`append_explicit`](Self::append_explicit)); events the episode holds already are
    /// skipped. Returns the positions the appended events took.
    ///
    /// # Errors
    /// Unknown or sealed episode, wrong dimension, SQLite errors (nothing appended then).
    pub fn append_batch_explicit(
        &self,
        project: &ProjectId,
        id: EpisodeId,
        events: &[(EventId, &Hypervector)],
    ) -> LedgerResult<Vec<usize>> {
        // Every event held already is no refusal here: nothing is appended.
        match self.append_events(project, id, events, true) {
            Err(LedgerError::Refused {
                reason: crate::base::Reason::AlreadyInEpisode,
                ..
            }) => Ok(Vec::new()),
            other => other,
        }
    }

    fn append_events(
        &self,
        project: &ProjectId,
        id: EpisodeId,
        events: &[(EventId, &Hypervector)],
        explicit: bool,
    ) -> LedgerResult<Vec<usize>> {
        for (_, v) in events {
            self.check_dim(v)?;
        }
        let (status, start) = self.episode_row(project, id)?;
        if status == EpisodeStatus::Sealed {
            return Err(LedgerError::Refused {
                reason: crate::base::Reason::EpisodeSealed,
                message: format!("episode {} is sealed and cannot be reopened", id.0),
            });
        }
        // An event is appended to an episode once: segmentation skips one the episode
        // holds already; an explicit append of one is refused.
        let mut held: std::collections::HashSet<u64> = self
            .ledger
            .reading(|rows| rows.episode_events(id.0))?
            .into_iter()
            .collect();
        let events: Vec<&(EventId, &Hypervector)> =
            events.iter().filter(|(e, _)| held.insert(e.0)).collect();
        if explicit && events.is_empty() {
            return Err(LedgerError::Refused {
                reason: crate::base::Reason::AlreadyInEpisode,
                message: format!(
                    "the event is already part of episode {} (appended once)",
                    id.0
                ),
            });
        }
        let (mut positional, mut topic) = self.episode_bundles(id)?;
        // Each event's time (a gap of `episode_idle_ms` in event time between the episode's
        // last event and the next one is a boundary: a conversation resumed later is
        // another episode, whatever the similarity says) and whether it is an
        // acknowledgement; read once per event.
        let facts: Vec<(Option<i64>, bool)> = if explicit {
            Vec::new()
        } else {
            self.ledger.reading(|rows| {
                events
                    .iter()
                    .map(|(e, _)| {
                        Ok(rows
                            .event_time_and_content(e.0)?
                            .map_or((None, false), |(at, content)| {
                                (Some(at), super::is_filler(&content))
                            }))
                    })
                    .collect()
            })?
        };
        let mut last_time: Option<i64> = if explicit || start == 0 {
            None
        } else {
            self.ledger.reading(|rows| rows.last_event_time(id.0))?
        };
        let mut shifted = false;
        let mut accepted = Vec::new();
        for (i, (n, (event, vector))) in (start..).zip(events).enumerate() {
            let (at, filler) = facts.get(i).copied().unwrap_or((None, false));
            let resumed = matches!((last_time, at), (Some(a), Some(b)) if b - a >= self.config.episode_idle_ms);
            // A short acknowledgement ("ok", "thanks!") belongs to the episode it answers:
            // it never starts one, by time or by topic.
            let ack = !explicit && filler;
            if !explicit
                && n > 0
                && !ack
                && (resumed
                    || (n >= self.config.topic_min_events
                        && similarity(&topic.binarize(id.0)?, vector)
                            < self.config.topic_shift_similarity))
            {
                shifted = true;
                break;
            }
            if at.is_some() {
                last_time = at;
            }
            positional.add(&vector.permute(n));
            topic.add(vector);
            accepted.push((*event, *vector, n));
        }
        let now = self.ledger.now_ms();
        let p = project.as_str();
        self.ledger.writing(|rows| {
            for (event, vector, pos) in &accepted {
                let slot = (*pos as u64, event.0);
                rows.add_episode_event(p, id.0, slot, &vector.to_le_bytes())?;
                // Open questions (`open_questions`, read by gap detection): a user question
                // joins them; any other role's event answers the episode's earlier ones.
                let (user, question) = rows.event_asks(event.0)?.unwrap_or((true, false));
                if !user {
                    rows.answer_open_questions(id.0, slot.0)?;
                } else if question {
                    rows.add_open_question(p, id.0, slot)?;
                }
            }
            // A refused event is no activity: the idle clock moves only with appends.
            let status = if shifted { "soft_sealed" } else { "open" };
            rows.episode_activity(id.0, status, now, !accepted.is_empty())
        })?;
        let mut open = self.open.locked();
        if shifted {
            open.remove(&id);
        } else {
            open.insert(id, (positional, topic));
        }
        Ok(accepted.iter().map(|a| a.2).collect())
    }

    fn set_status(
        &self,
        project: &ProjectId,
        id: EpisodeId,
        status: EpisodeStatus,
    ) -> LedgerResult<()> {
        self.ledger
            .writing(|rows| rows.set_episode_status(project.as_str(), id.0, status.as_str()))
    }

    /// Seals an episode with its outcome and reward (in [`REWARDS`]). Two binarized vectors are stored: the
    /// episode vector (bundle of its position-permuted events: slot `i` probes back to event
    /// `i`) and the topic vector (bundle of the events themselves: what the episode is
    /// about, used for similarity and consolidation). Sealing twice is a no-op.
    ///
    /// # Errors
    /// A reward outside [`REWARDS`] (`invalid_argument`); unknown episode, SQLite errors.
    pub fn end_episode(
        &self,
        project: &ProjectId,
        id: EpisodeId,
        outcome: Option<&str>,
        reward: Option<f64>,
    ) -> LedgerResult<()> {
        if let Some(r) = reward.filter(|r| !REWARDS.contains(r)) {
            return Err(LedgerError::Invalid {
                what: "reward",
                reason: format!(
                    "{r} is outside [{}, {}]: -1 is a failure, 1 a success, 0 neither",
                    REWARDS.start(),
                    REWARDS.end()
                ),
            });
        }
        let (status, n) = self.episode_row(project, id)?;
        if status == EpisodeStatus::Sealed {
            return self.complete_sealed(id, outcome, reward);
        }
        let (vector, topic) = if n > 0 {
            let (positional, topic) = self.episode_bundles(id)?;
            (
                Some(positional.binarize(id.0)?.to_le_bytes()),
                Some(topic.binarize(id.0)?.to_le_bytes()),
            )
        } else {
            (None, None)
        };
        let now = self.ledger.now_ms();
        self.ledger.writing(|rows| {
            rows.seal_episode(
                id.0,
                now,
                (outcome, reward),
                (vector.as_deref(), topic.as_deref()),
            )
        })?;
        self.open.locked().remove(&id);
        self.topics.locked().remove(project);
        Ok(())
    }

    /// Ending a sealed episode again: an outcome or reward it lacks (it was sealed by a new
    /// episode of its agent, or by idleness) is recorded; the same values are a no-op; a
    /// different one is refused (`episode_sealed`), never silently dropped.
    fn complete_sealed(
        &self,
        id: EpisodeId,
        outcome: Option<&str>,
        reward: Option<f64>,
    ) -> LedgerResult<()> {
        if outcome.is_none() && reward.is_none() {
            return Ok(());
        }
        let (stored_outcome, stored_reward) =
            self.ledger.reading(|rows| rows.episode_outcome(id.0))?;
        let clash_outcome = matches!((&stored_outcome, outcome), (Some(a), Some(b)) if a != b);
        let clash_reward = matches!((stored_reward, reward), (Some(a), Some(b)) if a != b);
        if clash_outcome || clash_reward {
            return Err(LedgerError::Refused {
                reason: crate::base::Reason::EpisodeSealed,
                message: format!(
                    "episode {} is sealed with another outcome or reward; it cannot be changed",
                    id.0
                ),
            });
        }
        self.ledger
            .writing(|rows| rows.complete_outcome(id.0, outcome, reward))
    }

    /// Soft-seals open episodes idle for `episode_idle_ms` and seals soft-sealed ones idle
    /// for twice that; returns how many changed (at most `budget`).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn seal_idle(&self, project: &ProjectId, budget: usize) -> LedgerResult<usize> {
        let now = self.ledger.now_ms();
        let idle = self.config.episode_idle_ms;
        let stale = self
            .ledger
            .reading(|rows| rows.idle_episodes(project.as_str(), now - idle, budget))?;
        let mut changed = 0;
        for (id, status, last) in stale {
            let id = EpisodeId(id);
            if status == "soft_sealed" && last < now - 2 * idle {
                self.end_episode(project, id, None, None)?;
                changed += 1;
            } else if status == "open" {
                self.set_status(project, id, EpisodeStatus::SoftSealed)?;
                changed += 1;
            }
        }
        Ok(changed)
    }

    /// One episode with its events.
    ///
    /// # Errors
    /// Unknown episode, SQLite errors.
    pub fn episode(&self, project: &ProjectId, id: EpisodeId) -> LedgerResult<Episode> {
        let Some((agent, status, outcome, reward, prev, next, vector, topic)) = self
            .ledger
            .reading(|rows| rows.episode_record(project.as_str(), id.0))?
        else {
            return Err(self.missing_episode(project, id)?);
        };
        let events: Vec<EventId> = self
            .ledger
            .reading(|rows| rows.episode_events(id.0))?
            .into_iter()
            .map(EventId)
            .collect();
        Ok(Episode {
            id,
            agent,
            status: EpisodeStatus::parse(&status)?,
            events,
            outcome,
            reward,
            prev: prev.map(EpisodeId),
            next: next.map(EpisodeId),
            vector: vector.map(|v| self.decode(&v)).transpose()?,
            topic: topic.map(|v| self.decode(&v)).transpose()?,
        })
    }

    /// Sealed episodes whose topic is most similar to `vector` (id, similarity), best first.
    ///
    /// # Errors
    /// Wrong dimension, SQLite errors.
    pub fn similar_episodes(
        &self,
        project: &ProjectId,
        vector: &Hypervector,
        k: usize,
    ) -> LedgerResult<Vec<(EpisodeId, f64)>> {
        self.check_dim(vector)?;
        let topics = self.sealed_topics(project)?;
        self.rank_words(&topics.0, &topics.1, vector, k)
            .map(|v| v.into_iter().map(|(id, s)| (EpisodeId(id), s)).collect())
    }

    /// The topic vectors of `project`'s sealed episodes (ids, packed words), oldest first:
    /// cached until an episode of the project is sealed.
    fn sealed_topics(&self, project: &ProjectId) -> LedgerResult<Arc<super::PackedVectors>> {
        if let Some(t) = self.topics.locked().get(project).cloned() {
            return Ok(t);
        }
        let rows = self
            .ledger
            .reading(|rows| rows.sealed_topics(project.as_str()))?;
        let t = Arc::new(self.decode_rows(&rows)?);
        self.topics.locked().insert(project.clone(), t.clone());
        Ok(t)
    }

    /// Row ids and the packed words of their vectors.
    fn decode_rows(&self, rows: &[(u64, Vec<u8>)]) -> LedgerResult<super::PackedVectors> {
        let mut words = Vec::with_capacity(rows.len() * self.dim.words());
        for (_, blob) in rows {
            words.extend_from_slice(self.decode(blob)?.words());
        }
        Ok((rows.iter().map(|r| r.0).collect(), words))
    }

    /// Exact top-k over stored vectors.
    pub(super) fn rank(
        &self,
        rows: Vec<(u64, Vec<u8>)>,
        query: &Hypervector,
        k: usize,
    ) -> LedgerResult<Vec<(u64, f64)>> {
        let (ids, words) = self.decode_rows(&rows)?;
        self.rank_words(&ids, &words, query, k)
    }

    /// Exact top-k over packed vectors (`ids[i]` owns the i-th vector).
    fn rank_words(
        &self,
        ids: &[u64],
        words: &[u64],
        query: &Hypervector,
        k: usize,
    ) -> LedgerResult<Vec<(u64, f64)>> {
        let block =
            hdv::Block::new(words, self.dim).map_err(|e| invalid("vectors", e.to_string()))?;
        let hits = Scan::new(k)
            .top_k(&block, query)
            .map_err(|e| invalid("query", e.to_string()))?;
        let d = self.dim.bits() as f64;
        Ok(hits
            .into_iter()
            .map(|h| (ids[h.index], 1.0 - 2.0 * f64::from(h.distance) / d))
            .collect())
    }
}
