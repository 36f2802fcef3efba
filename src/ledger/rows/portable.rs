//! The boundary's operations written once: every trait of [`Rows`](super::Rows) for any
//! [`Exec`] (the SQLite file, the PostgreSQL server), in the SQL both engines run
//! ([`exec`](super::exec) names the subset).

use super::exec::{Arg, Exec, ExecExt as _, Row, args};
use super::{
    AssociationRow, AssociationRows, Census, ConceptRecord, ConceptRows, CurationRows,
    EpisodeRecord, EpisodeRow, EpisodeRows, MapRows, MetaRows, PendingEpisode, ProcedureRow,
    ProcedureRows, ProposalRow, ProspectiveChangeRow, ProspectiveRow, ProspectiveRows,
    RecallLogRows, StoreRows, SynapseRows, ThreadRow, TraceRow, Transition, Weight,
};
use crate::ledger::{LedgerResult, PROJECT_HELD_SQL};

/// Memories one statement of [`RecallLogRows::count_accesses`] counts.
pub(crate) const ACCESS_CHUNK: usize = 64;

/// Ids are stored as 64-bit signed integers (both engines' integer type).
fn id(v: u64) -> i64 {
    v as i64
}

/// A row's first column, an id.
fn first_id(r: &Row) -> LedgerResult<u64> {
    r.get(0)
}

/// Records that `episode` supports `concept`, and that consolidation took the episode up.
fn supports(e: &impl Exec, project: &str, concept: u64, episode: u64) -> LedgerResult<()> {
    e.run(
        "INSERT INTO concept_support (concept_id, episode_id, project) VALUES (?1, ?2, ?3)",
        args![id(concept), id(episode), project],
    )?;
    e.run(
        "UPDATE episodes SET consolidated = 1 WHERE id = ?1",
        args![id(episode)],
    )
    .map(|_| ())
}

/// `(name, count)` rows of a grouped count over one project.
fn counts(e: &impl Exec, sql: &str, project: &str) -> LedgerResult<Vec<(String, u64)>> {
    e.all(sql, args![project], |r| Ok((r.get(0)?, r.get(1)?)))
}

impl<E: Exec> super::Rows for E {}

impl<E: Exec> SynapseRows for E {
    fn synapse(&self, project: &str, a: u64, b: u64) -> LedgerResult<Option<Weight>> {
        self.one(
            "SELECT weight, updated_at FROM synapses WHERE project = ?1 AND a = ?2 AND b = ?3",
            args![project, id(a), id(b)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn put_synapse(
        &self,
        project: &str,
        (a, b): (u64, u64),
        (weight, at): Weight,
        exists: bool,
    ) -> LedgerResult<()> {
        // A synapse that exists is updated in place (its key, and so its entry in
        // `synapses_b`, stays); a new one is inserted.
        let sql = if exists {
            "UPDATE synapses SET weight = ?4, updated_at = ?5 WHERE project = ?1 AND a = ?2 AND b = ?3"
        } else {
            "INSERT INTO synapses (project, a, b, weight, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)"
        };
        self.run(sql, args![project, id(a), id(b), weight, at])
            .map(|_| ())
    }

    fn synapses_of(&self, project: &str, node: u64) -> LedgerResult<Vec<(u64, Weight)>> {
        self.all(
            "SELECT b, weight, updated_at FROM synapses WHERE project = ?1 AND a = ?2
             UNION ALL SELECT a, weight, updated_at FROM synapses INDEXED BY synapses_b WHERE project = ?1 AND b = ?2",
            args![project, id(node)],
            |r| Ok((r.get::<u64>(0)?, (r.get(1)?, r.get(2)?))),
        )
    }
}

impl<E: Exec> RecallLogRows for E {
    fn project_held(&self, project: &str) -> LedgerResult<bool> {
        Ok(self
            .one(PROJECT_HELD_SQL, args![project], |r| r.get::<bool>(0))?
            .unwrap_or(false))
    }

    fn log_query(
        &self,
        project: &str,
        query: &str,
        (best_similarity, gap): (f64, bool),
        hits_json: &str,
        at: i64,
    ) -> LedgerResult<()> {
        self.run(
            "INSERT INTO query_log (project, query, best_similarity, hits, at, gap) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            args![project, query, best_similarity, hits_json, at, gap],
        )
        .map(|_| ())
    }

    fn count_accesses(&self, project: &str, ids: &[u64], at: i64) -> LedgerResult<()> {
        let mut ids = ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        for chunk in ids.chunks(ACCESS_CHUNK) {
            // ?1 the project, ?2 the time, then one id per row.
            let rows: Vec<String> = (0..chunk.len())
                .map(|i| format!("(?1, ?{}, 1.0, 2, ?2)", i + 3))
                .collect();
            let mut args = Vec::with_capacity(chunk.len() + 2);
            args.push(Arg::Text(project));
            args.push(Arg::Int(at));
            args.extend(chunk.iter().map(|&id| Arg::from(id)));
            self.run(
                &format!(
                    "INSERT INTO memory_traces (project, id, importance, accesses, last_access)
                     VALUES {}
                     ON CONFLICT (project, id) DO UPDATE SET
                        accesses = memory_traces.accesses + 1,
                        last_access = CASE WHEN excluded.last_access > memory_traces.last_access
                            THEN excluded.last_access ELSE memory_traces.last_access END",
                    rows.join(", ")
                ),
                &args,
            )?;
        }
        Ok(())
    }

    fn gap_queries(&self, project: &str) -> LedgerResult<Vec<(String, i64, f64, String)>> {
        self.all(
            "SELECT query, at, best_similarity, hits FROM query_log WHERE project = ?1 AND gap = 1 ORDER BY id",
            args![project],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
    }

    fn open_questions(&self, project: &str, limit: usize) -> LedgerResult<Vec<(u64, u64, String)>> {
        self.all(
            "SELECT q.episode_id, q.event_id, ev.content FROM open_questions q JOIN events ev ON ev.id = q.event_id
             WHERE q.project = ?1 ORDER BY q.event_id DESC, q.episode_id DESC LIMIT ?2",
            args![project, limit as i64],
            |r| {
                Ok((
                    r.get::<u64>(0)?,
                    r.get::<u64>(1)?,
                    r.get(2)?,
                ))
            },
        )
    }

    fn events_after(&self, project: &str, after: i64) -> LedgerResult<(i64, u64)> {
        Ok(self
            .one(
                "SELECT COALESCE(MAX(id), 0), COUNT(*) FROM events WHERE project = ?1 AND id > ?2",
                args![project, after],
                |r| Ok((r.get::<i64>(0)?, r.get::<u64>(1)?)),
            )?
            .unwrap_or((0, 0)))
    }
}

impl<E: Exec> MetaRows for E {
    fn put_metric(
        &self,
        project: &str,
        (name, value): (&str, f64),
        window: &str,
        at: i64,
    ) -> LedgerResult<()> {
        self.run(
            "INSERT INTO metrics (project, name, value, \"window\", at) VALUES (?1, ?2, ?3, ?4, ?5)",
            args![project, name, value, window, at],
        )
        .map(|_| ())
    }

    fn metric_mean(&self, project: &str, name: &str, n: usize) -> LedgerResult<Option<f64>> {
        Ok(self
            .one(
                "SELECT AVG(m.value) FROM (SELECT value FROM metrics WHERE project = ?1 AND name = ?2 ORDER BY at DESC, id DESC LIMIT ?3) AS m",
                args![project, name, n as i64],
                |r| r.get::<Option<f64>>(0),
            )?
            .flatten())
    }

    fn latest_metric(&self, project: &str, name: &str) -> LedgerResult<f64> {
        Ok(self
            .one(
                "SELECT value FROM metrics WHERE project = ?1 AND name = ?2 ORDER BY id DESC LIMIT 1",
                args![project, name],
                |r| r.get::<f64>(0),
            )?
            .unwrap_or(0.0))
    }

    fn pending_proposal(&self, project: &str, rule: &str) -> LedgerResult<Option<u64>> {
        self.one(
            "SELECT id FROM proposals WHERE project = ?1 AND rule = ?2 AND status = 'pending'",
            args![project, rule],
            first_id,
        )
    }

    fn add_proposal(
        &self,
        project: &str,
        (rule, title, rationale): (&str, &str, &str),
        metrics: &str,
        at: i64,
    ) -> LedgerResult<u64> {
        self.insert(
            "INSERT INTO proposals (project, rule, title, rationale, metrics, status, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?6) RETURNING id",
            args![project, rule, title, rationale, metrics, at],
        )
    }

    fn proposals(&self, project: &str) -> LedgerResult<Vec<ProposalRow>> {
        self.all(
            "SELECT id, rule, title, rationale, metrics, status FROM proposals WHERE project = ?1 ORDER BY id",
            args![project],
            |r| {
                Ok((
                    r.get::<u64>(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            },
        )
    }

    fn set_proposal_status(
        &self,
        project: &str,
        proposal: u64,
        status: &str,
        at: i64,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE proposals SET status = ?3, updated_at = ?4 WHERE project = ?1 AND id = ?2",
            args![project, id(proposal), status, at],
        )
        .map(|_| ())
    }
}

impl<E: Exec> ProcedureRows for E {
    fn add_procedure(
        &self,
        project: &str,
        (name, trigger): (&str, &str),
        vector: &[u8],
        steps_json: &str,
        at: i64,
    ) -> LedgerResult<u64> {
        self.insert(
            "INSERT INTO procedures (project, name, trigger_text, trigger_vector, steps, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
            args![project, name, trigger, vector, steps_json, at],
        )
    }

    fn procedure_outcome(
        &self,
        project: &str,
        procedure: u64,
        success: bool,
        at: i64,
    ) -> LedgerResult<bool> {
        let n = self.run(
            "UPDATE procedures SET successes = successes + ?3, failures = failures + ?4, updated_at = ?5 WHERE project = ?1 AND id = ?2",
            args![project, id(procedure), i64::from(success), i64::from(!success), at],
        )?;
        Ok(n > 0)
    }

    fn procedures(&self, project: &str, only: Option<u64>) -> LedgerResult<Vec<ProcedureRow>> {
        self.all(
            "SELECT id, name, trigger_text, trigger_vector, steps, successes, failures FROM procedures WHERE project = ?1 AND id = COALESCE(?2, id) ORDER BY id",
            args![project, only.map(id)],
            |r| {
                Ok((
                    r.get::<u64>(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get::<u64>(5)?,
                    r.get::<u64>(6)?,
                ))
            },
        )
    }
}

impl<E: Exec> AssociationRows for E {
    fn unassociated_episodes(&self, project: &str, limit: usize) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT id FROM episodes e WHERE project = ?1 AND status = 'sealed' AND topic IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM associations a WHERE a.episode_id = e.id) ORDER BY id DESC LIMIT ?2",
            args![project, limit as i64],
            first_id,
        )
    }

    fn add_association(
        &self,
        project: &str,
        episode: u64,
        (suggestion, confidence): (&str, f64),
        sources_json: &str,
        at: i64,
    ) -> LedgerResult<u64> {
        self.insert(
            "INSERT INTO associations (project, episode_id, suggestion, confidence, sources, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
            args![project, id(episode), suggestion, confidence, sources_json, at],
        )
    }

    fn candidate_associations(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<AssociationRow>> {
        self.all(
            "SELECT id, episode_id, suggestion, confidence, sources FROM associations WHERE project = ?1 AND status = 'candidate' ORDER BY id DESC LIMIT ?2",
            args![project, limit as i64],
            |r| {
                Ok((
                    r.get::<u64>(0)?,
                    r.get::<u64>(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                ))
            },
        )
    }
}

impl<E: Exec> CurationRows for E {
    fn plan_belief(&self, project: &str, plan_key: &str) -> LedgerResult<Option<u64>> {
        self.one(
            "SELECT belief_id FROM governance_audit WHERE project = ?1 AND plan_key = ?2 AND op_index = 0",
            args![project, plan_key],
            first_id,
        )
    }

    fn uncurated_episodes(&self, project: &str, limit: usize) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT id FROM episodes WHERE project = ?1 AND status = 'sealed' AND curated = 0 ORDER BY id LIMIT ?2",
            args![project, limit as i64],
            first_id,
        )
    }

    fn mark_curated(&self, episode: u64) -> LedgerResult<()> {
        self.run(
            "UPDATE episodes SET curated = 1 WHERE id = ?1",
            args![id(episode)],
        )
        .map(|_| ())
    }

    fn loose_events(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<(u64, String, String)>> {
        self.all(
            "SELECT id, role, content FROM events WHERE project = ?1 AND agent IS NULL
             AND id > COALESCE((SELECT after FROM curation_mark WHERE project = ?1), 0)
             AND NOT EXISTS (SELECT 1 FROM episode_events x WHERE x.event_id = events.id)
             ORDER BY id LIMIT ?2",
            args![project, limit as i64],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?, r.get(2)?)),
        )
    }

    fn move_curation_mark(&self, project: &str, after: u64) -> LedgerResult<()> {
        self.run(
            "INSERT INTO curation_mark (project, after) VALUES (?1, ?2)
             ON CONFLICT (project) DO UPDATE SET after = CASE WHEN excluded.after > curation_mark.after THEN excluded.after ELSE curation_mark.after END",
            args![project, id(after)],
        )
        .map(|_| ())
    }

    fn unsummarized_concepts(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<(u64, String)>> {
        self.all(
            "SELECT c.id, c.label FROM concepts c WHERE c.project = ?1 AND c.support >= 2 AND NOT EXISTS (SELECT 1 FROM governance_plans g WHERE g.project = c.project AND g.idempotency_key = 'concept-' || c.id || '-summary') ORDER BY c.id LIMIT ?2",
            args![project, limit as i64],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?)),
        )
    }

    fn concept_episodes(&self, concept: u64) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT episode_id FROM concept_support WHERE concept_id = ?1 ORDER BY episode_id",
            args![id(concept)],
            first_id,
        )
    }
}

impl<E: Exec> StoreRows for E {
    fn event_projects(&self) -> LedgerResult<Vec<String>> {
        self.all(
            "SELECT DISTINCT project FROM events ORDER BY project",
            args![],
            |r| r.get(0),
        )
    }

    fn event_ids(&self, project: &str) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT id FROM events WHERE project = ?1 ORDER BY id",
            args![project],
            first_id,
        )
    }

    fn traces(&self) -> LedgerResult<Vec<TraceRow>> {
        self.all(
            "SELECT e.project, e.id, e.ingested_at, t.importance, t.accesses, t.last_access
             FROM events e LEFT JOIN memory_traces t ON t.project = e.project AND t.id = e.id
             ORDER BY e.project, e.id",
            args![],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get::<u64>(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get::<Option<u64>>(4)?,
                    r.get(5)?,
                ))
            },
        )
    }
}

impl<E: Exec> MapRows for E {
    fn census(&self, project: &str, what: Census) -> LedgerResult<u64> {
        let sql = match what {
            Census::Threads => "SELECT COUNT(DISTINCT thread) FROM events WHERE project = ?1",
            Census::Episodes => "SELECT COUNT(*) FROM episodes WHERE project = ?1",
            Census::Concepts => "SELECT COUNT(*) FROM concepts WHERE project = ?1",
            Census::Synapses => "SELECT COUNT(*) FROM synapses WHERE project = ?1",
            Census::Procedures => "SELECT COUNT(*) FROM procedures WHERE project = ?1",
            Census::OpenProspective => {
                "SELECT COUNT(*) FROM prospective WHERE project = ?1 AND status IN ('pending', 'deferred')"
            }
        };
        Ok(self
            .one(sql, args![project], |r| r.get::<i64>(0))?
            .map_or(0, |n| n as u64))
    }

    fn event_span(&self, project: &str) -> LedgerResult<Option<(i64, i64)>> {
        Ok(self
            .one(
                "SELECT MIN(created_at), MAX(created_at) FROM events WHERE project = ?1",
                args![project],
                |r| Ok((r.get::<Option<i64>>(0)?, r.get::<Option<i64>>(1)?)),
            )?
            .and_then(|(a, b)| a.zip(b)))
    }

    fn role_counts(&self, project: &str) -> LedgerResult<Vec<(String, u64)>> {
        counts(
            self,
            "SELECT role, COUNT(*) FROM events WHERE project = ?1
             GROUP BY role ORDER BY COUNT(*) DESC, role",
            project,
        )
    }

    fn belief_status_counts(&self, project: &str) -> LedgerResult<Vec<(String, u64)>> {
        counts(
            self,
            "SELECT status, COUNT(*) FROM beliefs WHERE project = ?1
             GROUP BY status ORDER BY COUNT(*) DESC, status",
            project,
        )
    }

    fn largest_threads(&self, project: &str, limit: usize) -> LedgerResult<Vec<ThreadRow>> {
        self.all(
            "SELECT thread, COUNT(*), MIN(created_at), MAX(created_at) FROM events
             WHERE project = ?1 AND thread IS NOT NULL
             GROUP BY thread ORDER BY COUNT(*) DESC, thread LIMIT ?2",
            args![project, limit as i64],
            |r| Ok((r.get(0)?, r.get::<u64>(1)?, (r.get(2)?, r.get(3)?))),
        )
    }

    fn newest_episodes(&self, project: &str, limit: usize) -> LedgerResult<Vec<EpisodeRow>> {
        self.all(
            "SELECT e.id, e.agent, e.status,
                    COALESCE((SELECT MIN(v.created_at) FROM episode_events x JOIN events v ON v.id = x.event_id WHERE x.episode_id = e.id), e.started_at),
                    COALESCE((SELECT MAX(v.created_at) FROM episode_events x JOIN events v ON v.id = x.event_id WHERE x.episode_id = e.id), e.last_event_at),
                    (SELECT COUNT(*) FROM episode_events x WHERE x.episode_id = e.id)
             FROM episodes e WHERE e.project = ?1 ORDER BY e.id DESC LIMIT ?2",
            args![project, limit as i64],
            |r| {
                Ok((
                    r.get::<u64>(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    (r.get(3)?, r.get(4)?),
                    r.get::<u64>(5)?,
                ))
            },
        )
    }

    fn supported_concepts(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<(u64, String, u64)>> {
        self.all(
            "SELECT id, label, support FROM concepts WHERE project = ?1
             ORDER BY support DESC, id LIMIT ?2",
            args![project, limit as i64],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?, r.get::<u64>(2)?)),
        )
    }

    fn synapse_hubs(&self, project: &str, limit: usize) -> LedgerResult<Vec<(u64, u64, f64)>> {
        self.all(
            "SELECT id, COUNT(*), SUM(weight) FROM (
                 SELECT a AS id, weight FROM synapses WHERE project = ?1
                 UNION ALL SELECT b, weight FROM synapses WHERE project = ?1) AS s
             GROUP BY id ORDER BY SUM(weight) DESC, id LIMIT ?2",
            args![project, limit as i64],
            |r| Ok((r.get::<u64>(0)?, r.get::<u64>(1)?, r.get(2)?)),
        )
    }

    fn episode_contents(
        &self,
        project: &str,
        episode: u64,
        limit: usize,
    ) -> LedgerResult<Vec<String>> {
        self.all(
            "SELECT e.content FROM episode_events x JOIN events e ON e.id = x.event_id
             WHERE x.episode_id = ?1 AND x.project = ?2
             ORDER BY x.position LIMIT ?3",
            args![id(episode), project, limit as i64],
            |r| r.get(0),
        )
    }
}

impl<E: Exec> EpisodeRows for E {
    fn last_episode(&self, project: &str, agent: &str) -> LedgerResult<Option<(u64, String)>> {
        self.one(
            "SELECT id, status FROM episodes WHERE project = ?1 AND agent = ?2 ORDER BY id DESC LIMIT 1",
            args![project, agent],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?)),
        )
    }

    fn open_episode(&self, project: &str, agent: &str) -> LedgerResult<Option<u64>> {
        self.one(
            "SELECT id FROM episodes WHERE project = ?1 AND agent = ?2 AND status = 'open' ORDER BY id DESC LIMIT 1",
            args![project, agent],
            first_id,
        )
    }

    fn start_episode(
        &self,
        project: &str,
        agent: &str,
        at: i64,
        prev: Option<u64>,
    ) -> LedgerResult<u64> {
        let episode = self.insert(
            "INSERT INTO episodes (project, agent, status, started_at, last_event_at, prev_id) VALUES (?1, ?2, 'open', ?3, ?3, ?4) RETURNING id",
            args![project, agent, at, prev.map(id)],
        )?;
        if let Some(prev) = prev {
            self.run(
                "UPDATE episodes SET next_id = ?2 WHERE id = ?1",
                args![id(prev), id(episode)],
            )?;
        }
        Ok(episode)
    }

    fn episode_status(&self, project: &str, episode: u64) -> LedgerResult<Option<(String, u64)>> {
        self.one(
            "SELECT e.status, (SELECT COUNT(*) FROM episode_events WHERE episode_id = e.id) FROM episodes e WHERE e.project = ?1 AND e.id = ?2",
            args![project, id(episode)],
            |r| Ok((r.get(0)?, r.get::<u64>(1)?)),
        )
    }

    fn episode_record(&self, project: &str, episode: u64) -> LedgerResult<Option<EpisodeRecord>> {
        self.one(
            "SELECT agent, status, outcome, reward, prev_id, next_id, vector, topic FROM episodes WHERE project = ?1 AND id = ?2",
            args![project, id(episode)],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get::<Option<u64>>(4)?,
                    r.get::<Option<u64>>(5)?,
                    r.get(6)?,
                    r.get(7)?,
                ))
            },
        )
    }

    fn episode_events(&self, episode: u64) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT event_id FROM episode_events WHERE episode_id = ?1 ORDER BY position",
            args![id(episode)],
            first_id,
        )
    }

    fn episode_vectors(&self, episode: u64) -> LedgerResult<Vec<(u64, Vec<u8>)>> {
        self.all(
            "SELECT position, vector FROM episode_events WHERE episode_id = ?1 ORDER BY position",
            args![id(episode)],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?)),
        )
    }

    fn position_in(&self, episode: u64, event: u64) -> LedgerResult<Option<u64>> {
        self.one(
            "SELECT position FROM episode_events WHERE episode_id = ?1 AND event_id = ?2",
            args![id(episode), id(event)],
            first_id,
        )
    }

    fn event_project(&self, event: u64) -> LedgerResult<Option<String>> {
        self.one(
            "SELECT project FROM events WHERE id = ?1",
            args![id(event)],
            |r| r.get(0),
        )
    }

    fn event_time_and_content(&self, event: u64) -> LedgerResult<Option<(i64, String)>> {
        self.one(
            "SELECT created_at, content FROM events WHERE id = ?1",
            args![id(event)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn event_asks(&self, event: u64) -> LedgerResult<Option<(bool, bool)>> {
        // Read here, not in SQL: PostgreSQL keeps content as bytes. Trailing spaces only,
        // as SQLite's `rtrim` (a question mark before a line break ends no question).
        self.one(
            "SELECT role, content FROM events WHERE id = ?1",
            args![id(event)],
            |r| {
                let role: String = r.get(0)?;
                let content: String = r.get(1)?;
                Ok((role == "user", content.trim_end_matches(' ').ends_with('?')))
            },
        )
    }

    fn last_event_time(&self, episode: u64) -> LedgerResult<Option<i64>> {
        Ok(self
            .one(
                "SELECT MAX(e.created_at) FROM episode_events ee JOIN events e ON e.id = ee.event_id WHERE ee.episode_id = ?1",
                args![id(episode)],
                |r| r.get::<Option<i64>>(0),
            )?
            .flatten())
    }

    fn add_episode_event(
        &self,
        project: &str,
        episode: u64,
        (position, event): (u64, u64),
        vector: &[u8],
    ) -> LedgerResult<()> {
        self.run(
            "INSERT INTO episode_events (episode_id, position, event_id, vector, project) VALUES (?1, ?2, ?3, ?4, ?5)",
            args![id(episode), id(position), id(event), vector, project],
        )
        .map(|_| ())
    }

    fn add_open_question(
        &self,
        project: &str,
        episode: u64,
        (position, event): (u64, u64),
    ) -> LedgerResult<()> {
        self.run(
            "INSERT INTO open_questions (project, event_id, episode_id, position) VALUES (?1, ?2, ?3, ?4)",
            args![project, id(event), id(episode), id(position)],
        )
        .map(|_| ())
    }

    fn answer_open_questions(&self, episode: u64, position: u64) -> LedgerResult<()> {
        self.run(
            "DELETE FROM open_questions WHERE episode_id = ?1 AND position < ?2",
            args![id(episode), id(position)],
        )
        .map(|_| ())
    }

    fn episode_activity(
        &self,
        episode: u64,
        status: &str,
        at: i64,
        touched: bool,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE episodes SET status = ?2,
                last_event_at = CASE WHEN ?4 THEN ?3 ELSE last_event_at END WHERE id = ?1",
            args![id(episode), status, at, touched],
        )
        .map(|_| ())
    }

    fn set_episode_status(&self, project: &str, episode: u64, status: &str) -> LedgerResult<()> {
        self.run(
            "UPDATE episodes SET status = ?3 WHERE project = ?1 AND id = ?2",
            args![project, id(episode), status],
        )
        .map(|_| ())
    }

    fn seal_episode(
        &self,
        episode: u64,
        at: i64,
        (outcome, reward): (Option<&str>, Option<f64>),
        (vector, topic): (Option<&[u8]>, Option<&[u8]>),
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE episodes SET status = 'sealed', ended_at = ?2, outcome = ?3, reward = ?4, vector = ?5, topic = ?6 WHERE id = ?1",
            args![id(episode), at, outcome, reward, vector, topic],
        )
        .map(|_| ())
    }

    fn episode_outcome(&self, episode: u64) -> LedgerResult<(Option<String>, Option<f64>)> {
        Ok(self
            .one(
                "SELECT outcome, reward FROM episodes WHERE id = ?1",
                args![id(episode)],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?
            .unwrap_or((None, None)))
    }

    fn complete_outcome(
        &self,
        episode: u64,
        outcome: Option<&str>,
        reward: Option<f64>,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE episodes SET outcome = COALESCE(outcome, ?2), reward = COALESCE(reward, ?3) WHERE id = ?1",
            args![id(episode), outcome, reward],
        )
        .map(|_| ())
    }

    fn idle_episodes(
        &self,
        project: &str,
        before: i64,
        limit: usize,
    ) -> LedgerResult<Vec<(u64, String, i64)>> {
        self.all(
            "SELECT id, status, last_event_at FROM episodes WHERE project = ?1 AND status != 'sealed' AND last_event_at < ?2 ORDER BY id LIMIT ?3",
            args![project, before, limit as i64],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?, r.get(2)?)),
        )
    }

    fn sealed_topics(&self, project: &str) -> LedgerResult<Vec<(u64, Vec<u8>)>> {
        self.all(
            "SELECT id, topic FROM episodes WHERE project = ?1 AND status = 'sealed' AND topic IS NOT NULL ORDER BY id",
            args![project],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?)),
        )
    }
}

impl<E: Exec> ConceptRows for E {
    fn newest_sealed_episodes(&self, project: &str, limit: usize) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT id FROM episodes WHERE project = ?1 AND status = 'sealed' ORDER BY id DESC LIMIT ?2",
            args![project, limit as i64],
            first_id,
        )
    }

    fn sealed_count(&self, project: &str) -> LedgerResult<u64> {
        Ok(self
            .one(
                "SELECT COUNT(*) FROM episodes WHERE project = ?1 AND status = 'sealed'",
                args![project],
                |r| r.get::<i64>(0),
            )?
            .map_or(0, |n| n as u64))
    }

    fn unconsolidated_episodes(
        &self,
        project: &str,
        limit: usize,
    ) -> LedgerResult<Vec<PendingEpisode>> {
        self.all(
            "SELECT id, topic, reward FROM episodes WHERE project = ?1 AND status = 'sealed' AND consolidated = 0 AND topic IS NOT NULL ORDER BY id LIMIT ?2",
            args![project, limit as i64],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?, r.get(2)?)),
        )
    }

    fn unconsolidated_count(&self, project: &str) -> LedgerResult<u64> {
        Ok(self
            .one(
                "SELECT COUNT(*) FROM episodes WHERE project = ?1 AND status = 'sealed' AND consolidated = 0 AND topic IS NOT NULL",
                args![project],
                |r| r.get::<i64>(0),
            )?
            .map_or(0, |n| n as u64))
    }

    fn lonely_concepts(&self, project: &str, after: usize) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT s.concept_id FROM concept_support s JOIN concepts k ON k.id = s.concept_id
             WHERE k.project = ?1 AND k.support = 1
             AND (SELECT l.id FROM episodes l WHERE l.project = ?1 AND l.consolidated = 1 AND l.id > s.episode_id
                  ORDER BY l.id LIMIT 1 OFFSET ?2 - 1) IS NOT NULL",
            args![project, after as i64],
            first_id,
        )
    }

    fn concepts_beyond(&self, project: &str, keep: usize) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT id FROM concepts WHERE project = ?1 ORDER BY support DESC, id DESC LIMIT 9223372036854775807 OFFSET ?2",
            args![project, keep as i64],
            first_id,
        )
    }

    fn delete_concepts(&self, concepts: &[u64]) -> LedgerResult<()> {
        for &concept in concepts {
            self.run(
                "DELETE FROM concept_support WHERE concept_id = ?1",
                args![id(concept)],
            )?;
            self.run("DELETE FROM concepts WHERE id = ?1", args![id(concept)])?;
        }
        Ok(())
    }

    fn concept_ids(&self, project: &str) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT id FROM concepts WHERE project = ?1 ORDER BY id",
            args![project],
            first_id,
        )
    }

    fn concept_members(&self, concept: u64) -> LedgerResult<Vec<u64>> {
        self.all(
            "SELECT episode_id FROM concept_support WHERE concept_id = ?1",
            args![id(concept)],
            first_id,
        )
    }

    fn concept_counters(&self, concept: u64) -> LedgerResult<Option<Vec<u8>>> {
        self.one(
            "SELECT counters FROM concepts WHERE id = ?1",
            args![id(concept)],
            |r| r.get(0),
        )
    }

    fn join_concept(
        &self,
        project: &str,
        (concept, episode): (u64, u64),
        (counters, prototype): (&[u8], &[u8]),
        (successes, failures): (u64, u64),
        at: i64,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE concepts SET counters = ?2, prototype = ?3, support = support + 1, successes = successes + ?4, failures = failures + ?5, updated_at = ?6 WHERE id = ?1",
            args![id(concept), counters, prototype, id(successes), id(failures), at],
        )?;
        supports(self, project, concept, episode)
    }

    fn new_concept(
        &self,
        project: &str,
        (label, episode): (&str, u64),
        (counters, prototype): (&[u8], &[u8]),
        (successes, failures): (u64, u64),
        at: i64,
    ) -> LedgerResult<u64> {
        let concept = self.insert(
            "INSERT INTO concepts (project, label, prototype, counters, support, successes, failures, updated_at) VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6, ?7) RETURNING id",
            args![project, label, prototype, counters, id(successes), id(failures), at],
        )?;
        supports(self, project, concept, episode)?;
        Ok(concept)
    }

    fn merge_concepts(
        &self,
        (from, into): (u64, u64),
        (counters, prototype): (&[u8], &[u8]),
        support: u64,
        at: i64,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE concepts SET counters = ?2, prototype = ?3, support = ?4, successes = successes + (SELECT successes FROM concepts WHERE id = ?5), failures = failures + (SELECT failures FROM concepts WHERE id = ?5), updated_at = ?6 WHERE id = ?1",
            args![id(into), counters, prototype, id(support), id(from), at],
        )?;
        self.run(
            "UPDATE concept_support SET concept_id = ?2 WHERE concept_id = ?1",
            args![id(from), id(into)],
        )?;
        self.run("DELETE FROM concepts WHERE id = ?1", args![id(from)])
            .map(|_| ())
    }

    fn label_concepts(&self, labels: &[(u64, String)]) -> LedgerResult<()> {
        for (concept, label) in labels {
            self.run(
                "UPDATE concepts SET label = ?2 WHERE id = ?1",
                args![id(*concept), label],
            )?;
        }
        Ok(())
    }

    fn set_concept_vectors(
        &self,
        concept: u64,
        (counters, prototype): (&[u8], &[u8]),
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE concepts SET counters = ?2, prototype = ?3 WHERE id = ?1",
            args![id(concept), counters, prototype],
        )
        .map(|_| ())
    }

    fn episode_texts(&self, project: &str, episode: u64) -> LedgerResult<Vec<(bool, String)>> {
        self.all(
            "SELECT ev.role = 'user', ev.content FROM episode_events ee JOIN events ev ON ev.id = ee.event_id
             WHERE ee.episode_id = ?1 AND ev.project = ?2 ORDER BY ee.position",
            args![id(episode), project],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
    }

    fn concept_prototypes(&self, project: &str) -> LedgerResult<Vec<(u64, Vec<u8>)>> {
        self.all(
            "SELECT id, prototype FROM concepts WHERE project = ?1 ORDER BY id",
            args![project],
            |r| Ok((r.get::<u64>(0)?, r.get(1)?)),
        )
    }

    fn concept_records(&self, project: &str) -> LedgerResult<Vec<ConceptRecord>> {
        self.all(
            "SELECT id, label, prototype, successes, failures FROM concepts WHERE project = ?1 ORDER BY id",
            args![project],
            |r| {
                Ok((
                    r.get::<u64>(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get::<u64>(3)?,
                    r.get::<u64>(4)?,
                ))
            },
        )
    }
}

/// The columns of a prospective item, in [`ProspectiveRow`]'s order.
const PROSPECTIVE_COLUMNS: &str =
    "id, project, kind, text, status, source_event, due_at, confirmed_by";

fn prospective_row(r: &Row) -> LedgerResult<ProspectiveRow> {
    Ok((
        r.get::<u64>(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get::<u64>(5)?,
        r.get(6)?,
        r.get::<Option<u64>>(7)?,
    ))
}

impl<E: Exec> ProspectiveRows for E {
    fn items_from(
        &self,
        project: &str,
        source_event: u64,
        kind: &str,
    ) -> LedgerResult<Vec<ProspectiveRow>> {
        self.all(
            &format!(
                "SELECT {PROSPECTIVE_COLUMNS} FROM prospective WHERE project = ?1 AND source_event = ?2 AND kind = ?3 ORDER BY id"
            ),
            args![project, id(source_event), kind],
            prospective_row,
        )
    }

    fn add_prospective(
        &self,
        project: &str,
        (kind, text): (&str, &str),
        source_event: u64,
        due_at: Option<i64>,
        at: i64,
    ) -> LedgerResult<u64> {
        self.insert(
            "INSERT INTO prospective (project, kind, text, status, source_event, due_at, created_at, updated_at)
             VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?6) RETURNING id",
            args![project, kind, text, id(source_event), due_at, at],
        )
    }

    fn prospective_item(&self, project: &str, item: u64) -> LedgerResult<Option<ProspectiveRow>> {
        self.one(
            &format!(
                "SELECT {PROSPECTIVE_COLUMNS} FROM prospective WHERE project = ?1 AND id = ?2"
            ),
            args![project, id(item)],
            prospective_row,
        )
    }

    fn prospective_changes(
        &self,
        project: &str,
        item: u64,
    ) -> LedgerResult<Vec<ProspectiveChangeRow>> {
        self.all(
            "SELECT at, op, from_status, to_status, event_id, due_at FROM prospective_history
             WHERE project = ?1 AND item_id = ?2 ORDER BY id",
            args![project, id(item)],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get::<Option<u64>>(4)?,
                    r.get(5)?,
                ))
            },
        )
    }

    fn record_prospective(&self, project: &str, c: &Transition<'_>) -> LedgerResult<()> {
        self.run(
            "INSERT INTO prospective_history (project, item_id, at, op, from_status, to_status, event_id, due_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            args![project, id(c.item), c.at, c.op, c.from, c.to, c.event.map(id), c.due_at],
        )
        .map(|_| ())
    }

    fn confirmed_by(&self, event: u64) -> LedgerResult<Option<u64>> {
        self.one(
            "SELECT id FROM prospective WHERE confirmed_by = ?1",
            args![id(event)],
            first_id,
        )
    }

    fn confirm_prospective(
        &self,
        project: &str,
        item: u64,
        event: u64,
        at: i64,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE prospective SET status = 'confirmed', confirmed_by = ?3, updated_at = ?4 WHERE project = ?1 AND id = ?2",
            args![project, id(item), id(event), at],
        )
        .map(|_| ())
    }

    fn set_prospective(
        &self,
        project: &str,
        item: u64,
        (status, due_at): (&str, Option<i64>),
        at: i64,
    ) -> LedgerResult<()> {
        self.run(
            "UPDATE prospective SET status = ?3, due_at = ?4, updated_at = ?5 WHERE project = ?1 AND id = ?2",
            args![project, id(item), status, due_at, at],
        )
        .map(|_| ())
    }

    fn due_prospective(&self, project: &str, at: i64) -> LedgerResult<Vec<ProspectiveRow>> {
        self.all(
            &format!(
                "SELECT {PROSPECTIVE_COLUMNS} FROM prospective WHERE project = ?1 AND status IN ('confirmed', 'deferred')
                 AND confirmed_by IS NOT NULL AND due_at IS NOT NULL AND due_at <= ?2 ORDER BY due_at, id"
            ),
            args![project, at],
            prospective_row,
        )
    }

    fn expire_prospective(&self, project: &str, at: i64) -> LedgerResult<usize> {
        self.run(
            "INSERT INTO prospective_history (project, item_id, at, op, from_status, to_status, event_id, due_at)
             SELECT project, id, ?2, 'expire', 'pending', 'expired', NULL, due_at FROM prospective
             WHERE project = ?1 AND status = 'pending' AND due_at IS NOT NULL AND due_at < ?2",
            args![project, at],
        )?;
        self.run(
            "UPDATE prospective SET status = 'expired', updated_at = ?2
             WHERE project = ?1 AND status = 'pending' AND due_at IS NOT NULL AND due_at < ?2",
            args![project, at],
        )
    }
}
