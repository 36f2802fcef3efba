//! Procedures: reusable steps with a trigger, ranked by trigger similarity × reliability
//! (Beta(1, 1) posterior mean of recorded outcomes).

use hdv::Hypervector;

use super::Cognition;
use crate::base::ProjectId;
use crate::ledger::{LedgerError, LedgerResult};

crate::base::number_id!(
    /// Identifier of a procedure.
    ProcedureId
);

/// One step of a procedure.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Step {
    /// What to do.
    pub instruction: String,
    /// Optional code snippet.
    #[serde(default)]
    pub code: Option<String>,
    /// Optional tool call.
    #[serde(default)]
    pub tool_call: Option<String>,
}

/// A stored procedure.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Procedure {
    /// Id.
    pub id: ProcedureId,
    /// Name.
    pub name: String,
    /// When to use it.
    pub trigger: String,
    /// Steps.
    pub steps: Vec<Step>,
    /// Recorded successes.
    pub successes: u64,
    /// Recorded failures.
    pub failures: u64,
    /// `(successes + 1) / (successes + failures + 2)`.
    pub reliability: f64,
}

/// A suggested procedure with its score parts.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Suggestion {
    /// The procedure.
    pub procedure: Procedure,
    /// Similarity of the query to the trigger, in [−1, 1].
    pub similarity: f64,
    /// `max(similarity, 0) × reliability`.
    pub score: f64,
}

fn reliability(s: u64, f: u64) -> f64 {
    (s as f64 + 1.0) / ((s + f) as f64 + 2.0)
}

impl Cognition {
    /// Stores a procedure whose trigger text is encoded (by the caller) as `trigger_vector`.
    ///
    /// # Errors
    /// Wrong dimension, no steps, SQLite errors.
    pub fn add_procedure(
        &self,
        project: &ProjectId,
        name: &str,
        trigger: &str,
        trigger_vector: &Hypervector,
        steps: &[Step],
    ) -> LedgerResult<ProcedureId> {
        self.check_dim(trigger_vector)?;
        if steps.is_empty() {
            return Err(LedgerError::Invalid {
                what: "procedure",
                reason: "a procedure needs at least one step".to_owned(),
            });
        }
        let json = serde_json::to_string(steps).expect("steps serialize");
        let now = self.ledger.now_ms();
        let vector = trigger_vector.to_le_bytes();
        self.ledger
            .writing(|rows| {
                rows.add_procedure(project.as_str(), (name, trigger), &vector, &json, now)
            })
            .map(ProcedureId)
    }

    /// Records one outcome of a procedure.
    ///
    /// # Errors
    /// Unknown procedure (in this project), SQLite errors.
    pub fn record_procedure_outcome(
        &self,
        project: &ProjectId,
        id: ProcedureId,
        success: bool,
    ) -> LedgerResult<Procedure> {
        let now = self.ledger.now_ms();
        let found = self
            .ledger
            .writing(|rows| rows.procedure_outcome(project.as_str(), id.0, success, now))?;
        if !found {
            // Another project's procedure is answered as one that does not exist.
            return Err(LedgerError::NotFound {
                what: "procedure",
                id: id.0,
            });
        }
        self.procedure(project, id)?.ok_or(LedgerError::Invalid {
            what: "procedure",
            reason: "vanished".to_owned(),
        })
    }

    /// One procedure.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn procedure(
        &self,
        project: &ProjectId,
        id: ProcedureId,
    ) -> LedgerResult<Option<Procedure>> {
        Ok(self
            .procedures_where(project, Some(id))?
            .into_iter()
            .next()
            .map(|p| p.0))
    }

    fn procedures_where(
        &self,
        project: &ProjectId,
        id: Option<ProcedureId>,
    ) -> LedgerResult<Vec<(Procedure, Vec<u8>)>> {
        let rows = self
            .ledger
            .reading(|rows| rows.procedures(project.as_str(), id.map(|i| i.0)))?;
        rows.into_iter()
            .map(|(id, name, trigger, vector, steps, s, f)| {
                let steps: Vec<Step> =
                    serde_json::from_str(&steps).map_err(|_| LedgerError::Corrupt {
                        what: "procedure steps",
                        detail: format!(
                            "the steps of procedure {id} are not the JSON list of steps hypermem writes"
                        ),
                    })?;
                Ok((
                    Procedure {
                        id: ProcedureId(id),
                        name,
                        trigger,
                        steps,
                        successes: s,
                        failures: f,
                        reliability: reliability(s, f),
                    },
                    vector,
                ))
            })
            .collect()
    }

    /// The `k` procedures best suited to `query`: trigger similarity × reliability.
    ///
    /// # Errors
    /// Wrong dimension, SQLite errors.
    pub fn suggest_procedures(
        &self,
        project: &ProjectId,
        query: &Hypervector,
        k: usize,
    ) -> LedgerResult<Vec<Suggestion>> {
        self.check_dim(query)?;
        let mut out: Vec<Suggestion> = self
            .procedures_where(project, None)?
            .into_iter()
            .map(|(procedure, blob)| {
                let similarity = self.decode(&blob)?.similarity(query);
                let score = similarity.max(0.0) * procedure.reliability;
                Ok(Suggestion {
                    procedure,
                    similarity,
                    score,
                })
            })
            .collect::<LedgerResult<_>>()?;
        out.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then(a.procedure.id.cmp(&b.procedure.id))
        });
        out.truncate(k);
        Ok(out)
    }

    /// Procedures with at least `min_outcomes` outcomes and reliability below `threshold`.
    ///
    /// # Errors
    /// SQLite errors.
    pub fn unreliable_procedures(
        &self,
        project: &ProjectId,
        min_outcomes: u64,
        threshold: f64,
    ) -> LedgerResult<Vec<Procedure>> {
        Ok(self
            .procedures_where(project, None)?
            .into_iter()
            .map(|p| p.0)
            .filter(|p| p.successes + p.failures >= min_outcomes && p.reliability < threshold)
            .collect())
    }
}
