//! Knowledge gaps: recalls that found nothing of their own, unanswered user questions,
//! and concepts whose episodes mostly fail.

use std::collections::HashMap;

use super::Cognition;
use crate::base::ProjectId;
use crate::ledger::LedgerResult;

/// What kind of knowledge gap.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
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
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
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

impl Cognition {
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
        let rows = self
            .ledger
            .reading(|rows| rows.gap_queries(project.as_str()))?;
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
        // A user question is open when no later event of its episode comes from the agent
        // (kept in `open_questions` as episodes grow: newest first).
        let questions = self
            .ledger
            .reading(|rows| rows.open_questions(project.as_str(), limit))?;
        for (episode, event, content) in questions {
            gaps.push(Gap {
                kind: GapKind::OpenQuestion,
                description: format!("unanswered question in episode {episode}: {content}"),
                evidence: vec![event],
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
}
