//! The write path: an observation is appended to the ledger, then indexed (the lexical
//! index), encoded and stored in the vector tiers, and linked (a synapse to its thread
//! predecessor, its agent's open episode). It never enters recall.

use super::*;

impl Memory {
    /// Records one observation (see [`observe_batch`](Self::observe_batch)).
    ///
    /// # Errors
    /// As [`observe_batch`](Self::observe_batch).
    pub fn observe(&self, event: NewEvent) -> Result<EventId> {
        Ok(self.observe_batch(std::slice::from_ref(&event))?[0])
    }

    /// Records observations: appended to the ledger in one transaction, encoded (in
    /// parallel), stored in the vector tier under their event ids (synced), linked to
    /// their thread predecessor by a synapse and, when they have an agent, appended to that
    /// agent's open episode (one is started when it has none). Acknowledged when it returns.
    ///
    /// All or nothing from the caller's view: if a projection (vectors, synapses,
    /// episodes) fails after the ledger commit, the call errs; retrying the same batch
    /// completes what is missing without storing any event twice (events with a source id
    /// that is stored, with the same content, are the stored events), and the next open
    /// re-encodes from the ledger any vector that is still missing.
    ///
    /// # Errors
    /// Ledger validation (content size, references), `conflict` for a stored source id
    /// with other content, store and SQLite errors.
    pub fn observe_batch(&self, events: &[NewEvent]) -> Result<Vec<EventId>> {
        self.writable()?;
        self.recover_warm()?;
        self.flush_feedback()?;
        // Lexical tokens only for projects whose index is in memory: the others catch up
        // from the ledger when they are first recalled (tokenizing now would be thrown away).
        let loaded: std::collections::HashSet<&str> = {
            let lexicon = self.lexicon.reading();
            events
                .iter()
                .filter(|e| lexicon.contains_key(&e.project))
                .map(|e| e.project.as_str())
                .collect()
        };
        let semantic = self.semantic_bits(events)?;
        // Events without bits wait for the sentence model's background worker.
        let deferred = self.embedder.deferred();
        let (ids, prevs, prepared) = {
            let _append = self.append_lock.locked();
            // A retry of a batch whose projections failed: events whose source id is
            // stored (same content) are the stored events, not new rows.
            let stored = self.ledger.stored_by_source(events)?;
            let fresh: Vec<bool> = stored.iter().map(Option::is_none).collect();
            let rows: Vec<Option<(u32, Vec<u8>)>> = semantic
                .iter()
                .zip(&fresh)
                .filter(|(_, f)| **f)
                .map(|(s, _)| {
                    s.as_ref().map(|(input, v)| {
                        (
                            *input as u32,
                            v.words().iter().flat_map(|w| w.to_le_bytes()).collect(),
                        )
                    })
                })
                .collect();
            // The ledger append (one transaction, one sync) runs on one core while the
            // texts are encoded on the others: neither needs what the other makes.
            // Documents are encoded with uniform term weights and queries with IDF weights:
            // IDF on the documents too lowered recall@10 (`docs/EXPERIMENTS.md`). The
            // append runs on a pool thread: the caller's deadline goes with it.
            let deadline = crate::ledger::Deadline::current();
            let (prepared, appended) = rayon::join(
                || -> Vec<(Option<Hypervector>, Vec<String>)> {
                    events
                        .par_iter()
                        .map(|e| {
                            let tokens = if loaded.contains(e.project.as_str()) {
                                crate::text::tokens(&e.content)
                            } else {
                                Vec::new()
                            };
                            (self.encode(&e.content), tokens)
                        })
                        .collect()
                },
                || {
                    crate::ledger::Deadline::run_with(deadline.as_ref(), || {
                        if fresh.iter().all(|f| *f) {
                            self.ledger.append_batch_with(events, &rows, deferred)
                        } else {
                            let new: Vec<NewEvent> = events
                                .iter()
                                .zip(&fresh)
                                .filter(|(_, f)| **f)
                                .map(|(e, _)| e.clone())
                                .collect();
                            self.ledger.append_batch_with(&new, &rows, deferred)
                        }
                    })
                },
            );
            let mut appended = appended?.into_iter();
            // Each event's id and, for a new one, the `prev` the ledger gave it.
            let (ids, prevs): (Vec<EventId>, Vec<Option<Option<EventId>>>) = stored
                .iter()
                .map(|s| match s {
                    Some(id) => (*id, None),
                    None => {
                        let a = appended.next().expect("one id per new event");
                        (a.id, Some(a.prev))
                    }
                })
                .unzip();
            let spaces = self.spaces.reading();
            let lexicon = self.lexicon.reading();
            if self.ledger_shared() {
                // Other nodes append to the same projects: what they appended before this
                // batch is indexed first, so every index holds the ledger in id order.
                let mut firsts: std::collections::HashMap<&ProjectId, u64> = Default::default();
                for (i, e) in events.iter().enumerate().filter(|(i, _)| fresh[*i]) {
                    firsts.entry(&e.project).or_insert(ids[i].0);
                }
                for (project, first) in firsts {
                    if let Some(text) = lexicon.get(project) {
                        let theirs = text
                            .writing()
                            .catch_up_below(&self.ledger, project, first)?;
                        let theirs: Vec<VectorId> = theirs.into_iter().map(VectorId).collect();
                        self.tiers.adopt(project, &theirs);
                    }
                    if let Some(space) = spaces.get(project) {
                        self.extend_space(project, &mut space.writing())?;
                    }
                }
            }
            for (i, e) in events.iter().enumerate().filter(|(i, _)| fresh[*i]) {
                let id = ids[i];
                if let (Some((input, v)), Some(space)) = (&semantic[i], spaces.get(&e.project)) {
                    space.writing().push(id.0, *input, v);
                }
                if let Some(p) = lexicon.get(&e.project) {
                    // Loaded since the tokens were prepared: tokenize here.
                    let late;
                    let tokens = if loaded.contains(e.project.as_str()) {
                        &prepared[i].1
                    } else {
                        late = crate::text::tokens(&e.content);
                        &late
                    };
                    let mut p = p.writing();
                    let indexed = crate::index::lexical::Indexed {
                        id: id.0,
                        role: e.role,
                        speaker: e.speaker.as_deref(),
                        session: e.session.as_deref().or(e.thread.as_deref()),
                        content: &e.content,
                        tokens,
                    };
                    p.index(&indexed, |prev| {
                        crate::index::lexical::tail_of(&self.ledger, &e.project, prev)
                    });
                    if let Some(name) = &e.speaker {
                        p.speakers.extend(crate::text::tokens(name));
                    }
                }
            }
            (ids, prevs, prepared)
        };
        // The ledger is the truth: from here on, a failure leaves projections that a retry
        // of the same batch (by source id) completes, and that the next open repairs
        // (vectors are re-encoded from the ledger).
        match self.project_observed(events, &ids, &prepared, &prevs) {
            Ok(()) => Ok(ids),
            // Every event has a source id: a retry of the batch is the stored events, so
            // the cause (retryable or not) stands as it is.
            Err(e) if events.iter().all(|e| e.source_id.is_some()) => Err(e),
            // Without source ids a retry would store the events twice: the error says
            // they are stored, never that retrying can succeed.
            Err(e) => Err(crate::Error::Committed {
                events: ids,
                source: Box::new(e),
            }),
        }
    }

    /// The projections of observed events after their ledger commit: vectors into the
    /// tiers, thread synapses, episodes.
    pub(super) fn project_observed(
        &self,
        events: &[NewEvent],
        ids: &[EventId],
        prepared: &[(Option<Hypervector>, Vec<String>)],
        prevs: &[Option<Option<EventId>>],
    ) -> Result<()> {
        if let Some(e) = events
            .iter()
            .find(|e| crate::failpoint::projection_fails(e.project.as_str()))
        {
            return Err(crate::store::StoreError::Io {
                path: self.data_dir.join("vectors"),
                source: std::io::Error::other(format!(
                    "injected projection failure for project `{}`",
                    e.project
                )),
            }
            .into());
        }
        let mut by_project: std::collections::BTreeMap<&ProjectId, Vec<(VectorId, HvRef<'_>)>> =
            Default::default();
        let mut links: std::collections::BTreeMap<&ProjectId, Vec<(u64, u64)>> = Default::default();
        let mut retried_links: std::collections::BTreeMap<&ProjectId, Vec<(u64, u64)>> =
            Default::default();
        for (k, (((e, id), (v, _)), prev)) in
            events.iter().zip(ids).zip(prepared).zip(prevs).enumerate()
        {
            let fresh = prev.is_some();
            if let Some(v) = v
                && (fresh || self.tiers.trace(&e.project, VectorId(id.0)).is_none())
            {
                by_project
                    .entry(&e.project)
                    .or_default()
                    .push((VectorId(id.0), v.view()));
            }
            if e.thread.is_none() {
                continue;
            }
            // A stored event of a retried batch: its `prev` is read back.
            let prev = match prev {
                Some(prev) => *prev,
                None => self.ledger.get(&e.project, *id)?.and_then(|s| s.prev),
            };
            // A thread links a turn to the one before it when another author said that
            // one (a reply and what it answers); consecutive notes of one author are a
            // list, not an exchange, and link nothing.
            let author = |i: usize| (events[i].role, events[i].speaker.as_deref());
            let replies = match prev {
                None => false,
                // The turn before is usually the nearest earlier one of the batch.
                Some(p) => match ids[..k].iter().rposition(|x| *x == p) {
                    Some(i) => author(i) != (e.role, e.speaker.as_deref()),
                    None => self.ledger.get(&e.project, p)?.is_some_and(|s| {
                        (s.role, s.speaker.as_deref()) != (e.role, e.speaker.as_deref())
                    }),
                },
            };
            if let Some(prev) = prev.filter(|_| replies) {
                let target = if fresh {
                    &mut links
                } else {
                    &mut retried_links
                };
                target.entry(&e.project).or_default().push((prev.0, id.0));
            }
        }
        for (project, batch) in by_project {
            self.tiers.insert_batch(project, &batch, 1.0)?;
        }
        for (project, pairs) in retried_links {
            let missing = self.cognition.unlinked(project, &pairs)?;
            links.entry(project).or_default().extend(missing);
        }
        for (project, pairs) in links {
            self.cognition.strengthen_pairs(project, &pairs)?;
        }
        self.link_episodes(events, ids, prepared)?;
        Ok(())
    }

    /// Appends observed events with an agent to that agent's open episode, starting one
    /// when it has none (it never started one, or its last was sealed). On a topic shift the
    /// episode is soft-sealed and a new one, chained to it, takes the rest: every agent's
    /// events segment themselves; [`start_episode`](Self::start_episode) only draws a
    /// boundary where the agent wants one.
    pub(super) fn link_episodes(
        &self,
        events: &[NewEvent],
        ids: &[EventId],
        prepared: &[(Option<Hypervector>, Vec<String>)],
    ) -> Result<()> {
        let mut groups: std::collections::BTreeMap<
            (&ProjectId, &str),
            Vec<(EventId, &Hypervector)>,
        > = Default::default();
        for ((e, id), (v, _)) in events.iter().zip(ids).zip(prepared) {
            if let (Some(agent), Some(v)) = (e.agent.as_deref(), v) {
                groups
                    .entry((&e.project, agent))
                    .or_default()
                    .push((*id, v));
            }
        }
        for ((project, agent), items) in groups {
            // Segmentation runs for every agent: one without an open episode (it never
            // started one, or its last one was sealed) starts one with this event, and a
            // topic shift chains the next, by the same rule as an episode started explicitly.
            let mut episode = match self.cognition.open_episode(project, agent)? {
                Some(open) => open,
                None => self.cognition.start_episode(project, agent)?,
            };
            let mut rest = &items[..];
            while !rest.is_empty() {
                let appended = self
                    .cognition
                    .append_batch_to_episode(project, episode, rest)?
                    .len();
                rest = &rest[appended..];
                if !rest.is_empty() {
                    episode = self.cognition.start_episode(project, agent)?;
                }
            }
        }
        Ok(())
    }
}
