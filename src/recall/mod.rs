//! Recall: rank fusion of candidate lists and budgeted context packs with receipts.
//!
//! The `Memory` facade gathers candidates from its sources (BM25 and word-pair BM25 from
//! the in-memory [`lexical`] index, HDC similarity from the vector tiers, embeddings from the
//! semantic space, ripple over synapses), fuses them in [`fusion`] (per-query min-max
//! normalization, neighbour smoothing, session prior, bounded priors), and packs the result
//! under a token budget: 25 % of the caller's available tokens by default,
//! never more than 30 % whatever is requested (invariant 8). The receipt lists every
//! selected item and every suppressed candidate with its reason.

pub mod fusion;
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
    /// It states a value of the kind the question asks for (a date for "when").
    Answer,
    /// It tells something: it does not only ask.
    Tells,
    /// A speaker the query names said it.
    Speaker,
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
            Self::Answer => "answer",
            Self::Tells => "tells",
            Self::Speaker => "speaker",
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

    /// A direct component a stage adds to every candidate ([`fusion::add_component`]):
    /// evidence about the item itself that the order's dominance and unanimity compare.
    pub const fn is_component(self) -> bool {
        matches!(
            self,
            Self::Hint | Self::Answer | Self::Tells | Self::Speaker
        )
    }

    /// Lexical evidence of the item's own text.
    pub const fn is_lexical(self) -> bool {
        matches!(self, Self::Bm25 | Self::Bigram | Self::Phrase)
    }

    /// A prior: not evidence that the item matches the query's words or meaning (its
    /// role, its time, its session, the kind of value it states, a phrase it nearly
    /// holds). A neighbour's share is borrowed evidence, not a prior.
    pub const fn is_prior(self) -> bool {
        matches!(
            self,
            Self::User
                | Self::Hint
                | Self::Answer
                | Self::Tells
                | Self::Speaker
                | Self::Session
                | Self::PhraseBoost
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
    /// For an item carried in part: the byte range of its text the pack holds (the whole
    /// did not fit what was left of the budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<(usize, usize)>,
}

/// The fewest tokens an excerpt of an item may take: below this, what is left of a budget
/// holds too little of a long text to be worth carrying.
pub const EXCERPT_MIN_TOKENS: usize = 48;

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

impl PackCandidate {
    /// Its receipt line: `tokens` taken, `reason`, and the byte range of its text carried
    /// when only an `excerpt` of it is.
    fn line(&self, reason: String, tokens: usize, excerpt: Option<(usize, usize)>) -> ReceiptLine {
        ReceiptLine {
            id: self.id,
            slot: self.slot,
            tokens,
            reason,
            role: self.role,
            anchor: self.anchor.clone(),
            excerpt,
        }
    }
}

/// Greedy fill: candidates in order, each taken if it fits in what is left of the budget
/// and its text is not already in the pack (one slot per text once folded, whichever slot
/// brought it). Then what is left of the budget, if at least [`EXCERPT_MIN_TOKENS`], goes
/// to excerpts of the items that did not fit whole, best first, each at its rank's place:
/// the run of words of the item that fits and holds the most of the query's `words`
/// (stems), cut at word boundaries and marked with "…" where it was cut; its receipt names
/// the byte range (`excerpt`).
pub fn fill(
    budget: usize,
    candidates: Vec<PackCandidate>,
    words: &std::collections::HashSet<String>,
) -> Pack {
    let mut pack = Pack {
        budget,
        used: 0,
        items: Vec::new(),
        suppressed: Vec::new(),
    };
    let mut texts: HashMap<String, u64> = HashMap::new();
    // Items in pack order with their candidate's place; the candidates too long to fit.
    let mut placed: Vec<(usize, (ReceiptLine, String))> = Vec::new();
    let mut over: Vec<(usize, PackCandidate)> = Vec::new();
    for (at, c) in candidates.into_iter().enumerate() {
        let tokens = estimate_tokens(&c.text);
        let key = crate::text::fold(&c.text);
        if let Some(&first) = texts.get(&key) {
            pack.suppressed.push(c.line(
                format!("the same text as item {first}, already in the pack"),
                tokens,
                None,
            ));
            continue;
        }
        if pack.used + tokens <= budget {
            pack.used += tokens;
            texts.insert(key, c.id);
            placed.push((at, (c.line(c.reason.clone(), tokens, None), c.text.clone())));
        } else {
            over.push((at, c));
        }
    }
    for (at, c) in over {
        let left = budget - pack.used;
        let tokens = estimate_tokens(&c.text);
        let excerpt = (left >= EXCERPT_MIN_TOKENS)
            .then(|| excerpt(&c.text, left, words))
            .flatten();
        match excerpt {
            Some((start, end, text)) => {
                let taken = estimate_tokens(&text);
                pack.used += taken;
                placed.push((
                    at,
                    (
                        c.line(
                            format!(
                                "{}; an excerpt (bytes {start}–{end} of {}): the whole, {tokens} tokens, is over budget",
                                c.reason,
                                c.text.len()
                            ),
                            taken,
                            Some((start, end)),
                        ),
                        text,
                    ),
                ));
            }
            None => pack.suppressed.push(c.line(
                format!("over budget ({} of {budget} tokens used)", pack.used),
                tokens,
                None,
            )),
        }
    }
    placed.sort_by_key(|p| p.0);
    pack.items = placed.into_iter().map(|p| p.1).collect();
    pack
}

/// The part of `text` a pack carries in at most `tokens` tokens: the run of whole words
/// holding the most query `words` (by stem; the earliest such run on a tie), the matched
/// words centred in it, with "…" where it was cut. `(start, end, text)`, the byte range of `text` it holds; `None` when
/// not even one word fits.
fn excerpt(
    text: &str,
    tokens: usize,
    words: &std::collections::HashSet<String>,
) -> Option<(usize, usize, String)> {
    const MARK: &str = "…";
    // Room for a mark at both ends, in the pack's estimate (four bytes a token).
    let room = (tokens * 4).checked_sub(2 * MARK.len())?;
    // Words: runs of letters and digits.
    let mut spans: Vec<(usize, usize, bool)> = Vec::new();
    let mut start = None;
    for (i, ch) in text.char_indices().chain([(text.len(), ' ')]) {
        match (start, ch.is_alphanumeric()) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                let hit = crate::text::tokens(&text[s..i])
                    .iter()
                    .any(|t| words.contains(crate::text::stem(t)));
                spans.push((s, i, hit));
                start = None;
            }
            _ => {}
        }
    }
    let (mut best, mut best_hits) = (None, 0usize);
    let (mut lo, mut hits) = (0usize, 0usize);
    for hi in 0..spans.len() {
        hits += usize::from(spans[hi].2);
        while lo <= hi && spans[hi].1 - spans[lo].0 > room {
            hits -= usize::from(spans[lo].2);
            lo += 1;
        }
        if lo <= hi && (best.is_none() || hits > best_hits) {
            best = Some((lo, hi));
            best_hits = hits;
        }
    }
    let (start, end) = match best {
        Some((lo, hi)) => {
            // The matched words centred in the room: as much before the first as after
            // the last, as far as the text goes.
            let first = (lo..=hi).find(|&i| spans[i].2).unwrap_or(lo);
            let last = (lo..=hi).rev().find(|&i| spans[i].2).unwrap_or(hi);
            let half = (room - (spans[last].1 - spans[first].0)) / 2;
            let mut s = first;
            while s > 0 && spans[last].1 - spans[s - 1].0 <= spans[last].1 - spans[first].0 + half {
                s -= 1;
            }
            let mut e = last;
            while e + 1 < spans.len() && spans[e + 1].1 - spans[s].0 <= room {
                e += 1;
            }
            while s > 0 && spans[e].1 - spans[s - 1].0 <= room {
                s -= 1;
            }
            (spans[s].0, spans[e].1)
        }
        // One word longer than the room (a script written without spaces): its opening.
        None if !text.is_empty() => {
            let mut end = room.min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            (0, end)
        }
        None => return None,
    };
    if start == end {
        return None;
    }
    let mut out = String::with_capacity(end - start + 2 * MARK.len());
    if start > 0 {
        out.push_str(MARK);
    }
    out.push_str(&text[start..end]);
    if end < text.len() {
        out.push_str(MARK);
    }
    Some((start, end, out))
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
        let none = std::collections::HashSet::new();
        let pack = fill(10, vec![c(1, "x".repeat(30)), c(2, "y".repeat(80))], &none);
        assert_eq!(pack.used, 8);
        assert_eq!(pack.suppressed.len(), 1);
    }

    proptest::proptest! {
        /// Whatever the text and the room, an excerpt is a piece of the text cut at its
        /// byte range and never takes more tokens than it was given.
        #[test]
        fn an_excerpt_is_a_piece_of_the_text_within_its_tokens(
            text in "[a-zé ,.日本]{0,400}",
            tokens in 2usize..60,
        ) {
            let words: std::collections::HashSet<String> =
                ["a", "b"].iter().map(|w| (*w).to_owned()).collect();
            if let Some((start, end, out)) = excerpt(&text, tokens, &words) {
                proptest::prop_assert!(estimate_tokens(&out) <= tokens);
                proptest::prop_assert!(start < end && end <= text.len());
                proptest::prop_assert!(out.contains(&text[start..end]));
            }
        }
    }

    #[test]
    fn a_text_over_what_is_left_is_carried_as_its_best_excerpt_in_rank_order() {
        let c = |id, text: String| PackCandidate {
            id,
            slot: "direct",
            reason: format!("rank {id}"),
            text,
            role: None,
            anchor: None,
        };
        let words: std::collections::HashSet<String> = ["kiln", "glaze"]
            .iter()
            .map(|w| crate::text::stem(w).to_owned())
            .collect();
        let long = format!(
            "{} The kiln cracked the glaze at dawn. {}",
            "filler words about nothing much. ".repeat(60),
            "more filler text here. ".repeat(60)
        );
        let short = "The glaze recipe is in the blue notebook.".to_owned();
        let pack = fill(100, vec![c(1, long.clone()), c(2, short.clone())], &words);
        assert_eq!(pack.items.len(), 2, "{pack:?}");
        assert!(pack.used <= 100);
        let (line, text) = &pack.items[0];
        assert_eq!(line.id, 1, "the excerpt keeps its rank's place");
        let (start, end) = line.excerpt.expect("an excerpt");
        assert!(text.contains("The kiln cracked the glaze"), "{text}");
        assert!(text.starts_with('…') && text.ends_with('…'));
        assert_eq!(
            &text['…'.len_utf8()..text.len() - '…'.len_utf8()],
            &long[start..end]
        );
        assert_eq!(pack.items[1].1, short, "whole items are taken first");
        // Too little left for an excerpt: the item is over budget.
        let pack = fill(20, vec![c(1, long), c(2, short)], &words);
        assert_eq!(pack.items.len(), 1);
        assert!(pack.suppressed[0].reason.starts_with("over budget"));
    }
}
