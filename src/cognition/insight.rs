//! Meta-memory (metrics, rule-based issue detection, self-improvement proposals), knowledge
//! gaps and associations.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use super::synapses::RippleParams;
use super::{Cognition, EpisodeId};
use crate::ledger::{EventId, LedgerError, LedgerResult};
use crate::store::ProjectId;

/// The learning signals of one recall, applied by [`Cognition::record_recalls`].
#[derive(Debug, Clone, PartialEq)]
pub struct RecallTrace {
    /// Project recalled.
    pub project: ProjectId,
    /// Query text.
    pub query: String,
    /// Best HDC similarity among the results.
    pub best_similarity: f64,
    /// Whether the recall was a knowledge gap (no candidate with evidence of its own).
    pub gap: bool,
    /// Top results (their synapses are strengthened pairwise).
    pub hits: Vec<u64>,
    /// When the recall happened (ms).
    pub at: i64,
}

crate::ledger::string_enum!(
    /// Lifecycle of a self-improvement proposal.
    ProposalStatus {
        /// Waiting for a decision.
        Pending = "pending",
        /// Accepted.
        Accepted = "accepted",
        /// Rejected.
        Rejected = "rejected",
        /// Done.
        Implemented = "implemented",
    }
);

/// A self-improvement proposal raised by a rule over the metrics.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Proposal {
    /// Id.
    pub id: u64,
    /// The rule that raised it.
    pub rule: String,
    /// What to do.
    pub title: String,
    /// Why.
    pub rationale: String,
    /// The metric values that triggered it, as JSON.
    pub metrics: String,
    /// Status.
    pub status: ProposalStatus,
}

/// What kind of knowledge gap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapKind {
    /// A query whose best match was weak.
    WeakRecall,
    /// A user question in an episode that was never answered.
    OpenQuestion,
    /// A concept whose episodes mostly fail.
    FailingConcept,
}

/// A knowledge gap with its evidence.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Gap {
    /// Kind.
    pub kind: GapKind,
    /// Description.
    pub description: String,
    /// Raw event ids (or episode/concept ids for failing concepts) behind it.
    pub evidence: Vec<u64>,
    /// Severity in [0, 1].
    pub score: f64,
    /// How often it was met (identical gap queries aggregate: 1 for the other kinds).
    pub count: u64,
    /// When it was first met (ms), where known.
    pub first_at: Option<i64>,
    /// When it was last met (ms), where known.
    pub last_at: Option<i64>,
}

/// A candidate association ("subtle thought"): never a fact.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Association {
    /// Id.
    pub id: u64,
    /// The episode it starts from.
    pub episode: EpisodeId,
    /// Suggestion text built from the linked memories.
    pub suggestion: String,
    /// Confidence in [0, 1].
    pub confidence: f64,
    /// Source ids (events, episodes, concepts) as JSON.
    pub sources: String,
}

/// Rules of the meta-memory: metric, comparison, threshold, title.
const RULES: &[(&str, &str, bool, f64, &str)] = &[
    (
        "slow_recall",
        "recall_latency_ms",
        true,
        100.0,
        "Recall is slow: enable HNSW earlier or shrink recall budgets",
    ),
    (
        "cold_hot_tier",
        "hot_hit_rate",
        false,
        0.2,
        "Few recalls hit the hot tier: raise hot capacity or the promotion threshold",
    ),
    (
        "poor_feedback",
        "feedback_success_rate",
        false,
        0.5,
        "Feedback is mostly negative: review procedures and recent beliefs",
    ),
    (
        "many_gaps",
        "gap_count",
        true,
        20.0,
        "Many knowledge gaps: ingest more sources or ask the user",
    ),
];

impl Cognition {
    /// Records a metric value.
    ///
    /// # Errors
    /// Non-finite value, SQLite errors.
    pub fn record_metric(
        &self,
        project: &ProjectId,
        name: &str,
        value: f64,
        window: &str,
    ) -> LedgerResult<()> {
        if !value.is_finite() {
            return Err(LedgerError::Invalid {
                what: "metric",
                reason: format!("{name} = {value} is not finite"),
            });
        }
        let now = self.ledger.now_ms();
        self.ledger.write(|tx| {
            tx.execute(
                "INSERT INTO metrics (project, name, value, window, at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![project.as_str(), name, value, window, now],
            )
            .map(|_| ())
            .map_err(|e| self.ledger.sql(e))
        })
    }

    /// Mean of the last `n` values of a metric.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn metric_mean(
        &self,
        project: &ProjectId,
        name: &str,
        n: usize,
    ) -> LedgerResult<Option<f64>> {
        self.ledger.read(|c| {
            c.query_row(
                "SELECT AVG(value) FROM (SELECT value FROM metrics WHERE project = ?1 AND name = ?2 ORDER BY at DESC, id DESC LIMIT ?3)",
                params![project.as_str(), name, n as i64],
                |r| r.get(0),
            )
            .map_err(|e| self.ledger.sql(e))
        })
    }

    /// Applies the rules to the recent metrics (last 20 values each) and raises a proposal
    /// for every rule that fires and has no pending proposal yet. Returns the new ones.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn reflect(&self, project: &ProjectId) -> LedgerResult<Vec<Proposal>> {
        let mut raised = Vec::new();
        for &(rule, metric, above, threshold, title) in RULES {
            let Some(mean) = self.metric_mean(project, metric, 20)? else {
                continue;
            };
            let fires = if above {
                mean > threshold
            } else {
                mean < threshold
            };
            if !fires {
                continue;
            }
            let pending: Option<i64> = self.ledger.read(|c| {
                c.query_row(
                    "SELECT id FROM proposals WHERE project = ?1 AND rule = ?2 AND status = 'pending'",
                    params![project.as_str(), rule],
                    |r| r.get(0),
                )
                .optional()
                .map_err(|e| self.ledger.sql(e))
            })?;
            if pending.is_some() {
                continue;
            }
            let rationale = format!(
                "mean {metric} over the last 20 values is {mean:.3}, {} the threshold {threshold}",
                if above { "above" } else { "below" }
            );
            let metrics = serde_json::json!({ metric: mean }).to_string();
            let now = self.ledger.now_ms();
            let id = self.ledger.write(|tx| {
                tx.execute(
                    "INSERT INTO proposals (project, rule, title, rationale, metrics, status, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?6)",
                    params![project.as_str(), rule, title, rationale, metrics, now],
                )
                .map_err(|e| self.ledger.sql(e))?;
                Ok(tx.last_insert_rowid() as u64)
            })?;
            raised.push(Proposal {
                id,
                rule: rule.to_owned(),
                title: title.to_owned(),
                rationale,
                metrics,
                status: ProposalStatus::Pending,
            });
        }
        Ok(raised)
    }

    /// Proposals of `project` (all statuses), oldest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn proposals(&self, project: &ProjectId) -> LedgerResult<Vec<Proposal>> {
        let rows: Vec<(i64, String, String, String, String, String)> = self.ledger.read(|c| {
            c.prepare_cached("SELECT id, rule, title, rationale, metrics, status FROM proposals WHERE project = ?1 ORDER BY id")
                .and_then(|mut s| s.query_map([project.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?.collect())
                .map_err(|e| self.ledger.sql(e))
        })?;
        rows.into_iter()
            .map(|(id, rule, title, rationale, metrics, status)| {
                Ok(Proposal {
                    id: id as u64,
                    rule,
                    title,
                    rationale,
                    metrics,
                    status: ProposalStatus::parse(&status)?,
                })
            })
            .collect()
    }

    /// Moves a proposal: pending → accepted / rejected, accepted → implemented.
    ///
    /// # Errors
    /// Unknown proposal or a transition not listed above.
    pub fn set_proposal_status(
        &self,
        project: &ProjectId,
        id: u64,
        status: ProposalStatus,
    ) -> LedgerResult<()> {
        let current = self
            .proposals(project)?
            .into_iter()
            .find(|p| p.id == id)
            .ok_or_else(|| LedgerError::Invalid {
                what: "proposal",
                reason: format!("no proposal {id} in project `{project}`"),
            })?;
        use ProposalStatus::*;
        let allowed = matches!(
            (current.status, status),
            (Pending, Accepted | Rejected) | (Accepted, Implemented)
        );
        if !allowed {
            return Err(LedgerError::Invalid {
                what: "proposal transition",
                reason: format!("{} → {} is not allowed", current.status, status),
            });
        }
        let now = self.ledger.now_ms();
        self.ledger.write(|tx| {
            tx.execute(
                "UPDATE proposals SET status = ?3, updated_at = ?4 WHERE project = ?1 AND id = ?2",
                params![project.as_str(), id as i64, status.as_str(), now],
            )
            .map(|_| ())
            .map_err(|e| self.ledger.sql(e))
        })
    }

    /// Logs a recall query with its best similarity, hits and whether it was a gap (the
    /// caller's judgement: `Memory` decides by the project's relevance floor).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn record_query(
        &self,
        project: &ProjectId,
        query: &str,
        best_similarity: f64,
        hits: &[u64],
        gap: bool,
    ) -> LedgerResult<()> {
        let trace = RecallTrace {
            project: project.clone(),
            query: query.to_owned(),
            best_similarity,
            gap,
            hits: hits.to_vec(),
            at: self.ledger.now_ms(),
        };
        self.ledger.write(|tx| self.log_query_in(tx, &trace))
    }

    fn log_query_in(&self, tx: &rusqlite::Transaction<'_>, r: &RecallTrace) -> LedgerResult<()> {
        tx.prepare_cached(
            "INSERT INTO query_log (project, query, best_similarity, hits, at, gap) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )
        .and_then(|mut s| {
            s.execute(params![
                r.project.as_str(),
                r.query,
                r.best_similarity,
                serde_json::to_string(&r.hits).expect("ids serialize"),
                r.at,
                r.gap
            ])
        })
        .map(|_| ())
        .map_err(|e| self.ledger.sql(e))
    }

    /// Applies the learning signals of many recalls in one transaction: each strengthens
    /// the synapses among its top hits (as of its own time), counts an access of each hit
    /// in `memory_traces` (LTP: a first recall makes two accesses, storage being the
    /// first) and is logged for gap detection.
    ///
    /// # Errors
    /// SQLite errors; nothing is applied then.
    pub fn record_recalls(&self, recalls: &[RecallTrace]) -> LedgerResult<()> {
        if recalls.is_empty() {
            return Ok(());
        }
        self.ledger.write(|tx| {
            let mut access = tx
                .prepare_cached(
                    "INSERT INTO memory_traces (project, id, importance, accesses, last_access)
                     VALUES (?1, ?2, 1.0, 2, ?3)
                     ON CONFLICT (project, id) DO UPDATE SET
                        accesses = accesses + 1, last_access = max(last_access, excluded.last_access)",
                )
                .map_err(|e| self.ledger.sql(e))?;
            for r in recalls {
                self.strengthen_in(tx, &r.project, &Self::coactive_pairs(&r.hits), r.at)?;
                self.log_query_in(tx, r)?;
                for &id in &r.hits {
                    access
                        .execute(params![r.project.as_str(), id as i64, r.at])
                        .map_err(|e| self.ledger.sql(e))?;
                }
            }
            Ok(())
        })
    }

    /// Knowledge gaps: recalls that found nothing with evidence of its own (identical
    /// queries — case and spacing folded — aggregate, most frequent first, with their
    /// count and first and last time), unanswered user questions in episodes, and concepts
    /// whose episodes mostly fail (at most `limit` of each kind).
    ///
    /// # Errors
    /// SQLite errors.
    pub fn knowledge_gaps(&self, project: &ProjectId, limit: usize) -> LedgerResult<Vec<Gap>> {
        let mut gaps = Vec::new();
        // Identical queries (after statement normalization: case, spacing, punctuation)
        // aggregate into one gap with its count and first and last time.
        let rows: Vec<(String, i64, f64, String)> = self.ledger.read(|c| {
            c.prepare_cached(
                "SELECT query, at, best_similarity, hits FROM query_log WHERE project = ?1 AND gap = 1 ORDER BY id",
            )
            .and_then(|mut s| {
                s.query_map(params![project.as_str()], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect()
            })
            .map_err(|e| self.ledger.sql(e))
        })?;
        let mut groups: Vec<(String, String, u64, i64, i64, f64, String)> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        for (query, at, best, hits) in rows {
            let key = crate::governance::normalize_statement(&query);
            match index.get(&key) {
                Some(&i) => {
                    let g = &mut groups[i];
                    g.2 += 1;
                    g.3 = g.3.min(at);
                    g.4 = g.4.max(at);
                    g.5 = g.5.max(best);
                }
                None => {
                    index.insert(key.clone(), groups.len());
                    groups.push((key, query, 1, at, at, best, hits));
                }
            }
        }
        groups.sort_by(|a, b| b.2.cmp(&a.2).then(b.4.cmp(&a.4)));
        groups.truncate(limit);
        let weak = groups
            .into_iter()
            .map(|(_, query, count, first, last, best, hits)| {
                (query, count, first, last, best, hits)
            });
        for (query, count, first, last, best, hits) in weak {
            gaps.push(Gap {
                kind: GapKind::WeakRecall,
                description: format!(
                    "nothing in memory answers {query:?} (asked {count} time{}; best similarity {best:.3}, within the project's unrelated baseline)",
                    if count == 1 { "" } else { "s" }
                ),
                evidence: serde_json::from_str(&hits).unwrap_or_default(),
                score: (1.0 - best).clamp(0.0, 1.0),
                count,
                first_at: Some(first),
                last_at: Some(last),
            });
        }
        // A user question is open when no later event of its episode comes from the agent.
        let questions: Vec<(i64, i64, String)> = self.ledger.read(|c| {
            c.prepare_cached(
                "SELECT ee.episode_id, ev.id, ev.content FROM episode_events ee JOIN events ev ON ev.id = ee.event_id
                 WHERE ee.project = ?1 AND ev.role = 'user' AND rtrim(ev.content) LIKE '%?'
                 AND NOT EXISTS (SELECT 1 FROM episode_events later JOIN events le ON le.id = later.event_id
                     WHERE later.episode_id = ee.episode_id AND later.position > ee.position AND le.role != 'user')
                 ORDER BY ev.id DESC LIMIT ?2",
            )
            .and_then(|mut s| s.query_map(params![project.as_str(), limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect())
            .map_err(|e| self.ledger.sql(e))
        })?;
        for (episode, event, content) in questions {
            gaps.push(Gap {
                kind: GapKind::OpenQuestion,
                description: format!("unanswered question in episode {episode}: {content}"),
                evidence: vec![event as u64],
                score: 0.7,
                count: 1,
                first_at: None,
                last_at: None,
            });
        }
        let mut failing: Vec<_> = self
            .concepts(project)?
            .into_iter()
            .filter(|c| c.outcomes.0 + c.outcomes.1 >= 3 && c.reliability < 0.5)
            .collect();
        failing.sort_by(|a, b| a.reliability.total_cmp(&b.reliability));
        for c in failing.into_iter().take(limit) {
            gaps.push(Gap {
                kind: GapKind::FailingConcept,
                description: format!(
                    "episodes about \"{}\" fail often ({} of {})",
                    c.label,
                    c.outcomes.1,
                    c.outcomes.0 + c.outcomes.1
                ),
                evidence: c.support.iter().map(|e| e.0).collect(),
                score: 1.0 - c.reliability,
                count: 1,
                first_at: None,
                last_at: None,
            });
        }
        Ok(gaps)
    }

    /// For up to `budget` recent sealed episodes without associations: the nearest concepts
    /// (other than the episode's own) and a ripple from its events over synapses become
    /// candidate associations, stored and returned. Candidates, never facts.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn generate_associations(
        &self,
        project: &ProjectId,
        budget: usize,
    ) -> LedgerResult<Vec<Association>> {
        let episodes: Vec<i64> = self.ledger.read(|c| {
            c.prepare_cached(
                "SELECT id FROM episodes e WHERE project = ?1 AND status = 'sealed' AND topic IS NOT NULL
                 AND NOT EXISTS (SELECT 1 FROM associations a WHERE a.episode_id = e.id) ORDER BY id DESC LIMIT ?2",
            )
            .and_then(|mut s| s.query_map(params![project.as_str(), budget as i64], |r| r.get(0))?.collect())
            .map_err(|e| self.ledger.sql(e))
        })?;
        let concepts = self.concepts(project)?;
        let mut out = Vec::new();
        for id in episodes {
            let ep = self.episode(project, EpisodeId(id as u64))?;
            let topic = ep.topic.clone().expect("sealed episodes with a topic");
            let own: Vec<_> = concepts
                .iter()
                .filter(|c| c.support.contains(&ep.id))
                .map(|c| c.id)
                .collect();
            let related: Vec<_> = self
                .nearby_concepts(project, &topic, 3)?
                .into_iter()
                .filter(|(c, s)| !own.contains(c) && *s >= self.config.concept_similarity / 2.0)
                .collect();
            let seeds: Vec<u64> = ep.events.iter().map(|e| e.0).collect();
            let rippled: Vec<_> = self
                .ripple(
                    project,
                    &seeds,
                    RippleParams {
                        max_depth: 2,
                        max_nodes: 32,
                        ..RippleParams::default()
                    },
                )?
                .into_iter()
                .filter(|a| !seeds.contains(&a.id))
                .take(3)
                .collect();
            let mut parts = Vec::new();
            let mut sources = serde_json::Map::new();
            let mut confidence: f64 = 0.0;
            for (cid, sim) in &related {
                if let Some(c) = concepts.iter().find(|c| c.id == *cid) {
                    parts.push(format!(
                        "it resembles earlier episodes about \"{}\" (similarity {sim:.2})",
                        c.label
                    ));
                    confidence = confidence.max(*sim);
                }
            }
            for a in &rippled {
                if let Some(e) = self.ledger.get(project, EventId(a.id))? {
                    let snippet: String = e.content.chars().take(80).collect();
                    parts.push(format!(
                        "it is linked to \"{snippet}\" (activation {:.2})",
                        a.activation
                    ));
                    confidence = confidence.max(a.activation);
                }
            }
            if parts.is_empty() {
                continue;
            }
            sources.insert(
                "concepts".into(),
                serde_json::json!(related.iter().map(|c| c.0.0).collect::<Vec<_>>()),
            );
            sources.insert(
                "events".into(),
                serde_json::json!(rippled.iter().map(|a| a.id).collect::<Vec<_>>()),
            );
            let suggestion = format!("Episode {}: {}.", id, parts.join("; "));
            let sources = serde_json::Value::Object(sources).to_string();
            let confidence = confidence.clamp(0.0, 1.0);
            let now = self.ledger.now_ms();
            let aid = self.ledger.write(|tx| {
                tx.execute(
                    "INSERT INTO associations (project, episode_id, suggestion, confidence, sources, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![project.as_str(), id, suggestion, confidence, sources, now],
                )
                .map_err(|e| self.ledger.sql(e))?;
                Ok(tx.last_insert_rowid() as u64)
            })?;
            out.push(Association {
                id: aid,
                episode: ep.id,
                suggestion,
                confidence,
                sources,
            });
        }
        Ok(out)
    }

    /// Stored candidate associations of `project`, newest first.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn associations(
        &self,
        project: &ProjectId,
        limit: usize,
    ) -> LedgerResult<Vec<Association>> {
        let rows: Vec<(i64, i64, String, f64, String)> = self.ledger.read(|c| {
            c.prepare_cached("SELECT id, episode_id, suggestion, confidence, sources FROM associations WHERE project = ?1 AND status = 'candidate' ORDER BY id DESC LIMIT ?2")
                .and_then(|mut s| s.query_map(params![project.as_str(), limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))?.collect())
                .map_err(|e| self.ledger.sql(e))
        })?;
        Ok(rows
            .into_iter()
            .map(|(id, ep, suggestion, confidence, sources)| Association {
                id: id as u64,
                episode: EpisodeId(ep as u64),
                suggestion,
                confidence,
                sources,
            })
            .collect())
    }
}
