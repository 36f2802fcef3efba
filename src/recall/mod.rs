//! Recall: rank fusion of candidate lists and budgeted context packs with receipts.
//!
//! The `Memory` facade gathers candidates (HDC similarity from the vector tiers, BM25 from
//! the in-memory [`lexical`] index), fuses them here with weighted reciprocal rank fusion, and
//! packs the result under a token budget: 25 % of the caller's available tokens by default,
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
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Fused {
    /// The item.
    pub id: u64,
    /// Fused score (sum of contributions).
    pub score: f64,
    /// `(source, rank (1-based), contribution)`.
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

/// One line of a pack receipt.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ReceiptLine {
    /// The item.
    pub id: u64,
    /// Slot (`belief`, `procedure`, `direct`, `directive`, `associative`).
    pub slot: &'static str,
    /// Tokens it takes.
    pub tokens: usize,
    /// Why it was selected or suppressed.
    pub reason: String,
}

/// A context pack: the selected texts and the receipt accounting for every candidate.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
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
pub fn fill(budget: usize, candidates: Vec<(u64, &'static str, String, String)>) -> Pack {
    let mut pack = Pack {
        budget,
        used: 0,
        items: Vec::new(),
        suppressed: Vec::new(),
    };
    for (id, slot, reason, text) in candidates {
        let tokens = estimate_tokens(&text);
        if pack.used + tokens <= budget {
            pack.used += tokens;
            pack.items.push((
                ReceiptLine {
                    id,
                    slot,
                    tokens,
                    reason,
                },
                text,
            ));
        } else {
            pack.suppressed.push(ReceiptLine {
                id,
                slot,
                tokens,
                reason: format!("over budget ({} of {budget} tokens used)", pack.used),
            });
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
        let pack = fill(
            10,
            vec![
                (1, "direct", "r".into(), "x".repeat(30)),
                (2, "direct", "r".into(), "y".repeat(80)),
            ],
        );
        assert_eq!(pack.used, 8);
        assert_eq!(pack.suppressed.len(), 1);
    }
}
