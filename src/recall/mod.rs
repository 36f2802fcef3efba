//! Recall: rank fusion of candidate lists and budgeted context packs with receipts.
//!
//! The `Memory` facade gathers candidates from its sources (BM25 and word-pair BM25 from
//! the in-memory [`lexical`] index, HDC similarity from the vector tiers, embeddings from the
//! semantic space, ripple over synapses), fuses them in [`fusion`] (per-query min-max
//! normalization, neighbour smoothing, session prior, bounded priors), and packs the result
//! under a token budget: 25 % of the caller's available tokens by default,
//! never more than 30 % whatever is requested (invariant 8). The receipt lists every
//! selected item and every suppressed candidate with its reason.

pub mod directives;
pub mod fusion;
pub mod lexical;
pub mod query;
pub mod supersede;
pub mod values;

use std::collections::HashMap;

/// Default share of the available tokens a pack may use.
pub const DEFAULT_BUDGET_SHARE: f64 = 0.25;
/// Hard ceiling of that share.
pub const MAX_BUDGET_SHARE: f64 = 0.30;

/// What a part of a fused score comes from: a source that scored the item, evidence it
/// borrowed from the turns around it, or a prior. Serialized by name (`"bm25"`, …), the
/// names `--weight` and `--sources` take.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Signal {
    /// BM25 over the lexical index.
    Bm25,
    /// BM25 over word pairs.
    Bigram,
    /// BM25 over the words of quoted phrases.
    Phrase,
    /// HDC similarity in the vector tiers.
    Vector,
    /// Embedding similarity in the semantic space.
    Semantic,
    /// Events of the nearest episodes and concept.
    Episode,
    /// Spreading activation over synapses (associative).
    Ripple,
    /// A share of the direct evidence of the turn before or after it in its session; its
    /// rank field holds the lending turn's id.
    Neighbour,
    /// A share of the best direct evidence of its session.
    Session,
    /// Role prior: the user said it.
    User,
    /// It happened inside the window of a time hint in the query.
    Hint,
    /// A quoted phrase of the query that no candidate contains verbatim, counted as a
    /// boost for the items that do hold it nearly (its words) instead of a filter.
    PhraseBoost,
    /// A standing directive given its own slot.
    Directive,
}

impl Signal {
    /// The name in breakdowns and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Bm25 => "bm25",
            Self::Bigram => "bigram",
            Self::Phrase => "phrase",
            Self::Vector => "vector",
            Self::Semantic => "semantic",
            Self::Episode => "episode",
            Self::Ripple => "ripple",
            Self::Neighbour => "neighbour",
            Self::Session => "session",
            Self::User => "user",
            Self::Hint => "hint",
            Self::PhraseBoost => "phrase_boost",
            Self::Directive => "directive",
        }
    }

    /// A source that scored the query against the item itself (its rank in the
    /// breakdown is its place in that source's list).
    pub const fn is_direct_source(self) -> bool {
        matches!(
            self,
            Self::Bm25
                | Self::Bigram
                | Self::Phrase
                | Self::Vector
                | Self::Semantic
                | Self::Episode
        )
    }

    /// Lexical evidence of the item's own text.
    pub const fn is_lexical(self) -> bool {
        matches!(self, Self::Bm25 | Self::Bigram | Self::Phrase)
    }

    /// A prior: not evidence about the item's content (its role, its time, its session,
    /// a phrase it nearly holds). A neighbour's share is borrowed evidence, not a prior.
    pub const fn is_prior(self) -> bool {
        matches!(
            self,
            Self::User | Self::Hint | Self::Session | Self::PhraseBoost
        )
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A fused item: total score and each source's contribution.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fused {
    /// The item.
    pub id: u64,
    /// Fused score (sum of contributions).
    pub score: f64,
    /// `(signal, rank in its source (1-based; 0 for a prior), contribution)`.
    pub breakdown: Vec<(Signal, usize, f64)>,
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

/// Greedy fill: candidates in order, each taken if it fits in what is left of the budget
/// and its text is not already in the pack (one slot per text once folded, whichever slot
/// brought it).
pub fn fill(budget: usize, candidates: Vec<PackCandidate>) -> Pack {
    let mut pack = Pack {
        budget,
        used: 0,
        items: Vec::new(),
        suppressed: Vec::new(),
    };
    let mut texts: HashMap<String, u64> = HashMap::new();
    for c in candidates {
        let tokens = estimate_tokens(&c.text);
        let key = crate::text::fold(&c.text);
        if let Some(&first) = texts.get(&key) {
            pack.suppressed.push(ReceiptLine {
                id: c.id,
                slot: c.slot,
                tokens,
                reason: format!("the same text as item {first}, already in the pack"),
                role: c.role,
                anchor: c.anchor,
            });
            continue;
        }
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
            texts.insert(key, c.id);
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
