//! Meta-memory: metrics, rules over their recent means, and the self-improvement
//! proposals they raise (pending → accepted / rejected → implemented).

use super::Cognition;
use crate::base::ProjectId;
use crate::ledger::{LedgerError, LedgerResult};

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
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
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
        self.ledger
            .writing(|rows| rows.put_metric(project.as_str(), (name, value), window, now))
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
        self.ledger
            .reading(|rows| rows.metric_mean(project.as_str(), name, n))
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
            let pending = self
                .ledger
                .reading(|rows| rows.pending_proposal(project.as_str(), rule))?;
            if pending.is_some() {
                continue;
            }
            let rationale = format!(
                "mean {metric} over the last 20 values is {mean:.3}, {} the threshold {threshold}",
                if above { "above" } else { "below" }
            );
            let metrics = serde_json::json!({ metric: mean }).to_string();
            let now = self.ledger.now_ms();
            let id = self.ledger.writing(|rows| {
                rows.add_proposal(project.as_str(), (rule, title, &rationale), &metrics, now)
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
        let rows = self
            .ledger
            .reading(|rows| rows.proposals(project.as_str()))?;
        rows.into_iter()
            .map(|(id, rule, title, rationale, metrics, status)| {
                Ok(Proposal {
                    id,
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
        self.ledger
            .writing(|rows| rows.set_proposal_status(project.as_str(), id, status.as_str(), now))
    }
}
