//! What each recall teaches: the query log (with the recall's gap decision) and the
//! learning signals of recalled memories, applied in one transaction.

use super::Cognition;
use crate::base::ProjectId;
use crate::ledger::LedgerResult;
use crate::ledger::rows::Rows;

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
    /// Top results (they count an access; with `strengthen`, their synapses are
    /// strengthened pairwise).
    pub hits: Vec<u64>,
    /// Whether the recall strengthens the synapses among its hits (the profile's
    /// `[recall] learn`): otherwise recall never changes what later recalls rank.
    pub strengthen: bool,
    /// When the recall happened (ms).
    pub at: i64,
}

impl Cognition {
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
            strengthen: false,
            at: self.ledger.now_ms(),
        };
        self.ledger.writing(|rows| log_query_in(rows, &trace))
    }

    /// Logs the queries of many recalls (for gap detection) in one transaction, and
    /// nothing else: what a read-only view records of the recalls it answered. A project
    /// erased since (by another process) gets no row: a read never brings one back.
    ///
    /// # Errors
    /// SQLite errors; nothing is logged then.
    pub fn log_recalls(&self, recalls: &[RecallTrace]) -> LedgerResult<()> {
        if recalls.is_empty() {
            return Ok(());
        }
        self.ledger.writing(|rows| {
            for r in recalls {
                if rows.project_held(r.project.as_str())? {
                    log_query_in(rows, r)?;
                }
            }
            Ok(())
        })
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
        self.ledger.writing(|rows| {
            for r in recalls {
                if r.strengthen {
                    self.strengthen_in(rows, &r.project, &Self::coactive_pairs(&r.hits), r.at)?;
                }
                log_query_in(rows, r)?;
                rows.count_accesses(r.project.as_str(), &r.hits, r.at)?;
            }
            Ok(())
        })
    }
}

/// Logs recall `r` for gap detection.
fn log_query_in(rows: &dyn Rows, r: &RecallTrace) -> LedgerResult<()> {
    let hits = serde_json::to_string(&r.hits).expect("ids serialize");
    rows.log_query(
        r.project.as_str(),
        &r.query,
        (r.best_similarity, r.gap),
        &hits,
        r.at,
    )
}
