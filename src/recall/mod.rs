//! Recall: rank fusion of candidate lists and budgeted context packs with receipts.
//!
//! The `Memory` facade gathers candidates from its sources (BM25 and word-pair BM25 from
//! the in-memory [`lexical`] index, HDC similarity from the vector tiers, embeddings from the
//! semantic space, ripple over synapses), fuses them in [`fusion`] (per-query min-max
//! normalization, neighbour smoothing, session prior, bounded priors), and packs the result
//! under a token budget: 25 % of the caller's available tokens by default,
//! never more than 30 % whatever is requested (invariant 8). The receipt lists every
//! selected item and every suppressed candidate with its reason.

use std::collections::HashMap;

pub mod directives;
pub mod fusion;
pub mod lexical;
pub mod query;
pub mod supersede;
pub mod values;

/// RRF constant (Cormack et al.): dampens the head of each list.
pub const RRF_K: f64 = 60.0;
/// Default share of the available tokens a pack may use.
pub const DEFAULT_BUDGET_SHARE: f64 = 0.25;
/// Hard ceiling of that share.
pub const MAX_BUDGET_SHARE: f64 = 0.30;

/// A candidate list from one source, best first.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// Source name (`vector`, `fts`, ...), used in score breakdowns.
    pub source: &'static str,
    /// Weight of this source in the fusion.
    pub weight: f64,
    /// Item ids, best first.
    pub ids: Vec<u64>,
}

/// A fused item: total score and each source's contribution.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fused {
    /// The item.
    pub id: u64,
    /// Fused score (sum of contributions).
    pub score: f64,
    /// `(source, rank (1-based), contribution)`.
    #[serde(deserialize_with = "crate::names::breakdown")]
    pub breakdown: Vec<(&'static str, usize, f64)>,
}

/// Weighted reciprocal rank fusion: `score(id) = Σ_source weight / (RRF_K + rank)`.
/// Ties are broken by id so the order is deterministic.
pub fn fuse(lists: &[Ranked]) -> Vec<Fused> {
    let mut by_id: HashMap<u64, Fused> = HashMap::new();
    for list in lists {
        for (i, &id) in list.ids.iter().enumerate() {
            let rank = i + 1;
            let c = list.weight / (RRF_K + rank as f64);
            let f = by_id.entry(id).or_insert(Fused {
                id,
                score: 0.0,
                breakdown: Vec::new(),
            });
            if f.breakdown.iter().all(|(s, _, _)| *s != list.source) {
                f.score += c;
                f.breakdown.push((list.source, rank, c));
            }
        }
    }
    let mut out: Vec<Fused> = by_id.into_values().collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    out
}

/// The token budget of a pack: `requested` (default 25 % of `available`) capped at 30 %.
pub fn pack_budget(available_tokens: usize, requested: Option<usize>) -> usize {
    let cap = (available_tokens as f64 * MAX_BUDGET_SHARE).floor() as usize;
    let default = (available_tokens as f64 * DEFAULT_BUDGET_SHARE).floor() as usize;
    requested.unwrap_or(default).min(cap)
}

/// Token estimate of a text: about four bytes per token, at least one.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4).max(1)
}

/// Where a pack item comes from: the event it is (or, for a belief, its first evidence),
/// with its place in the conversation and its source.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Anchor {
    /// The event.
    pub event: u64,
    /// The caller's id of the event (`source_id`).
    pub source_id: Option<String>,
    /// Its thread.
    pub thread: Option<String>,
    /// Its session.
    pub session: Option<String>,
    /// The document or collection it was recorded from.
    pub source: Option<String>,
    /// Who spoke, by name.
    pub speaker: Option<String>,
    /// When it happened (ms since the epoch).
    pub created_at: Option<i64>,
}

impl From<&crate::ledger::Event> for Anchor {
    fn from(e: &crate::ledger::Event) -> Self {
        Self {
            event: e.id.0,
            source_id: e.source_id.clone(),
            thread: e.thread.clone(),
            session: e.session.clone(),
            source: e.source.clone(),
            speaker: e.speaker.clone(),
            created_at: Some(e.created_at),
        }
    }
}

/// One line of a pack receipt.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReceiptLine {
    /// The item.
    pub id: u64,
    /// Slot (`belief`, `procedure`, `direct`, `directive`, `associative`).
    #[serde(deserialize_with = "crate::names::name")]
    pub slot: crate::names::Name,
    /// Tokens it takes.
    pub tokens: usize,
    /// Why it was selected or suppressed.
    pub reason: String,
    /// Who said it, for an event (beliefs and procedures have none).
    pub role: Option<crate::ledger::Role>,
    /// Where it comes from.
    pub anchor: Option<Anchor>,
}

/// A candidate for a pack slot.
#[derive(Debug, Clone, PartialEq)]
pub struct PackCandidate {
    /// The item (event, belief or procedure id).
    pub id: u64,
    /// Its slot.
    pub slot: &'static str,
    /// Why it is a candidate.
    pub reason: String,
    /// The text the pack would carry.
    pub text: String,
    /// Who said it, for an event.
    pub role: Option<crate::ledger::Role>,
    /// Where it comes from.
    pub anchor: Option<Anchor>,
}

/// A context pack: the selected texts and the receipt accounting for every candidate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pack {
    /// Token budget used for this pack.
    pub budget: usize,
    /// Tokens used (never above `budget`).
    pub used: usize,
    /// Selected items in order, with their text.
    pub items: Vec<(ReceiptLine, String)>,
    /// Candidates left out, with the reason.
    pub suppressed: Vec<ReceiptLine>,
}

/// Greedy fill: candidates in order, each taken if it fits in what is left of the budget.
pub fn fill(budget: usize, candidates: Vec<PackCandidate>) -> Pack {
    let mut pack = Pack {
        budget,
        used: 0,
        items: Vec::new(),
        suppressed: Vec::new(),
    };
    for c in candidates {
        let tokens = estimate_tokens(&c.text);
        let line = |reason| ReceiptLine {
            id: c.id,
            slot: c.slot,
            tokens,
            reason,
            role: c.role,
            anchor: c.anchor.clone(),
        };
        if pack.used + tokens <= budget {
            pack.used += tokens;
            pack.items.push((line(c.reason.clone()), c.text.clone()));
        } else {
            pack.suppressed.push(line(format!(
                "over budget ({} of {budget} tokens used)",
                pack.used
            )));
        }
    }
    pack
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_rewards_agreement_and_is_deterministic() {
        let lists = [
            Ranked {
                source: "vector",
                weight: 1.0,
                ids: vec![1, 2, 3],
            },
            Ranked {
                source: "fts",
                weight: 1.0,
                ids: vec![3, 4],
            },
        ];
        let f = fuse(&lists);
        assert_eq!(f[0].id, 3, "found by both sources");
        assert_eq!(f[0].breakdown.len(), 2);
        assert_eq!(fuse(&lists), f);
    }

    #[test]
    fn budgets_are_capped_at_thirty_percent() {
        assert_eq!(pack_budget(1000, None), 250);
        assert_eq!(pack_budget(1000, Some(100)), 100);
        assert_eq!(pack_budget(1000, Some(10_000)), 300);
        let c = |id, text: String| PackCandidate {
            id,
            slot: "direct",
            reason: "r".into(),
            text,
            role: None,
            anchor: None,
        };
        let pack = fill(10, vec![c(1, "x".repeat(30)), c(2, "y".repeat(80))]);
        assert_eq!(pack.used, 8);
        assert_eq!(pack.suppressed.len(), 1);
    }
}
